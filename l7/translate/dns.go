package translate

import (
	"net/netip"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	dnscommon "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/common/dns/v3"
	dnscluster "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dns/v3"
	cares "github.com/envoyproxy/go-control-plane/envoy/extensions/network/dns_resolver/cares/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
)

// Upstreams named by DNS (model.DNSName) become Envoy DNS clusters with
// strict DNS semantics (the envoy.clusters.dns extension, which replaces
// type STRICT_DNS and its Cluster fields): every address the name
// resolves to is an endpoint of its own, balanced, health checked and
// ejected on its own, and re-resolution adds and removes endpoints.
// Logical DNS (one connection target, the first address) suits huge
// external services that rotate addresses; a backend name here is a
// Kubernetes Service or a set of servers, whose every address should take
// traffic. Proxyless gRPC clients know only type LOGICAL_DNS (grpc-go
// refuses the others, and the extension), which is what they get.

// The DNS cluster's timing: re-resolve at the record's TTL, but no more
// often than every dnsMinRefresh (a TTL of 0 or 1 would make every
// gateway ask continuously), and every dnsRefresh when the answer carries
// no TTL.
const (
	dnsRefresh    = 5 * time.Second
	dnsMinRefresh = 5 * time.Second
)

// DNSClusterType is the name of Envoy's DNS cluster extension.
const DNSClusterType = "envoy.clusters.dns"

// caresResolver is the name of Envoy's c-ares DNS resolver.
const caresResolver = "envoy.network.dns_resolver.cares"

// dnsCluster makes c, the cluster of upstream u named n, resolve n through
// DNS; resolvers, when any, are the DNS servers asked.
func dnsCluster(c *cluster.Cluster, n model.DNSName, group string, resolvers []netip.AddrPort) {
	cfg := &dnscluster.DnsCluster{
		DnsRefreshRate:    dur(dnsRefresh),
		RespectDnsTtl:     true,
		DnsMinRefreshRate: dur(dnsMinRefresh),
		// Clusters are IPv4 first in most places; an IPv6-only name
		// still resolves (AAAA when there is no A).
		DnsLookupFamily:        dnscommon.DnsLookupFamily_V4_PREFERRED,
		TypedDnsResolverConfig: dnsResolverConfig(resolvers),
	}
	c.ClusterDiscoveryType = &cluster.Cluster_ClusterType{ClusterType: &cluster.Cluster_CustomClusterType{
		Name: DNSClusterType, TypedConfig: mustAny(cfg),
	}}
	c.EdsClusterConfig = nil
	c.LoadAssignment = &endpoint.ClusterLoadAssignment{ClusterName: c.GetName(), Endpoints: []*endpoint.LocalityLbEndpoints{{
		Locality:            &core.Locality{Zone: group},
		LoadBalancingWeight: u32(1),
		LbEndpoints: []*endpoint.LbEndpoint{{HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{
			Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
				Address: n.Host, PortSpecifier: &core.SocketAddress_PortValue{PortValue: uint32(n.Port)},
			}}},
		}}}},
	}}}
}

// dnsResolverConfig is c-ares asking the resolvers only, or nil for
// Envoy's default (c-ares with /etc/resolv.conf; in Kubernetes the pod's,
// with its search domains). Search domains and options of resolv.conf
// apply either way.
func dnsResolverConfig(resolvers []netip.AddrPort) *core.TypedExtensionConfig {
	if len(resolvers) == 0 {
		return nil
	}
	cfg := &cares.CaresDnsResolverConfig{}
	for _, r := range resolvers {
		cfg.Resolvers = append(cfg.Resolvers, &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
			Address: r.Addr().String(), PortSpecifier: &core.SocketAddress_PortValue{PortValue: uint32(r.Port())},
		}}})
	}
	return &core.TypedExtensionConfig{Name: caresResolver, TypedConfig: mustAny(cfg)}
}

// withDNSResolvers points a cluster of type STRICT_DNS or LOGICAL_DNS
// (the rate limit service's, a tracing collector's) at the resolvers.
func withDNSResolvers(c *cluster.Cluster, resolvers []netip.AddrPort) {
	if t := c.GetType(); len(resolvers) > 0 && c.GetClusterType() == nil && (t == cluster.Cluster_STRICT_DNS || t == cluster.Cluster_LOGICAL_DNS) {
		c.TypedDnsResolverConfig = dnsResolverConfig(resolvers)
	}
}

// grpcLogicalDNS gives proxyless gRPC clients their form of the DNS
// clusters in out: type LOGICAL_DNS with the one name (grpc-go resolves
// it itself, with the system's resolver, and ignores the gateways'
// resolvers). The shared clusters are copied, not changed.
func grpcLogicalDNS(out Resources) {
	var cs []types.Resource
	for i, r := range out[resource.ClusterType] {
		c, ok := r.(*cluster.Cluster)
		if !ok || c.GetClusterType().GetName() != DNSClusterType {
			continue
		}
		if cs == nil {
			cs = append([]types.Resource(nil), out[resource.ClusterType]...)
		}
		c = proto.Clone(c).(*cluster.Cluster)
		c.ClusterDiscoveryType = &cluster.Cluster_Type{Type: cluster.Cluster_LOGICAL_DNS}
		cs[i] = c
	}
	if cs != nil {
		out[resource.ClusterType] = cs
	}
}
