package translate_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	dnscommon "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/common/dns/v3"
	dnscluster "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/dns/v3"
	cares "github.com/envoyproxy/go-control-plane/envoy/extensions/network/dns_resolver/cares/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// dnsConfig has one upstream named by DNS beside an EDS one, a tracing
// collector and a global rate limit service named by DNS too.
func dnsConfig(dnsName model.DNSName) model.Config {
	vip := netip.MustParseAddr("192.0.2.1")
	return model.Config{
		Gateways: []model.Gateway{{Name: "pub", Group: "internal", Tracing: &model.Tracing{Collector: "otel.internal:4317"},
			Listeners: []model.Listener{{Name: "web", VIP: vip, Port: 80, Protocol: model.HTTP, Default: true}}}},
		Services: []model.Service{{
			Name: "greeter", Group: "internal", Hosts: []string{"greeter.internal"},
			Upstreams: []model.Upstream{
				{Name: "named", HTTP2: true, DNS: &dnsName},
				{Name: "ip", HTTP2: true, Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("192.0.2.10:50051"), Weight: 1}}},
			},
			Routes: []model.Route{
				{Name: "ip", Prefix: "/", Headers: []model.HeaderMatch{{Name: "x-to", Exact: "ip"}}, Targets: []model.WeightedTarget{{Upstream: "ip", Weight: 1}}},
				{Name: "named", Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "named", Weight: 1}}},
			},
		}},
	}
}

// TestDNSUpstreams: an upstream named by DNS is an Envoy DNS cluster
// (strict: every address an endpoint) with the name in its own load
// assignment and no EDS; the gateways' resolvers, when given, are the
// cluster's c-ares resolvers and also those of the other clusters named by
// DNS; the set validates; the cache builds the same; proxyless gRPC
// clients get type LOGICAL_DNS instead.
func TestDNSUpstreams(t *testing.T) {
	resolvers := []netip.AddrPort{netip.MustParseAddrPort("127.0.23.53:53"), netip.MustParseAddrPort("10.96.0.10:53")}
	in := dnsConfig(model.DNSName{Host: "greeter.svc", Port: 50051})
	in.Services[0].Routes[1].RateLimit = &ratelimit.RouteLimits{Global: &ratelimit.Global{PerRoute: &ratelimit.Quota{Requests: 10, Unit: ratelimit.Minute}}}
	r := resolve(t, in, model.Options{
		DNSResolvers: resolvers, RateLimitService: &model.RateLimitService{Host: "ratelimit.internal", Port: 8081}})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	set := translate.Group(r, "internal", translate.Gateway)
	if err := validate.Set(set); err != nil {
		t.Fatalf("the set fails validation: %v", err)
	}
	clusters := map[string]*cluster.Cluster{}
	for _, res := range set[resource.ClusterType] {
		c := res.(*cluster.Cluster)
		clusters[c.GetName()] = c
	}
	c := clusters["greeter/named"]
	if c == nil || c.GetClusterType().GetName() != "envoy.clusters.dns" || c.GetEdsClusterConfig() != nil {
		t.Fatalf("greeter/named: %v, want an envoy.clusters.dns cluster without EDS", c)
	}
	var cfg dnscluster.DnsCluster
	if err := c.GetClusterType().GetTypedConfig().UnmarshalTo(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.GetAllAddressesInSingleEndpoint() || !cfg.GetRespectDnsTtl() || cfg.GetDnsMinRefreshRate().AsDuration() != 5*time.Second ||
		cfg.GetDnsLookupFamily() != dnscommon.DnsLookupFamily_V4_PREFERRED {
		t.Errorf("DnsCluster %v, want strict (one endpoint per address), TTL respected from 5s, IPv4 preferred", &cfg)
	}
	if got := caresServers(t, cfg.GetTypedDnsResolverConfig().GetTypedConfig().GetValue()); got != "[127.0.23.53:53 10.96.0.10:53]" {
		t.Errorf("resolvers %s, want the --dns-resolvers ones", got)
	}
	sa := c.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if sa.GetAddress() != "greeter.svc" || sa.GetPortValue() != 50051 || len(c.GetLoadAssignment().GetEndpoints()) != 1 {
		t.Errorf("load assignment %v, want greeter.svc:50051", c.GetLoadAssignment())
	}
	for _, res := range set[resource.EndpointType] {
		if res.(*endpoint.ClusterLoadAssignment).GetClusterName() == "greeter/named" {
			t.Errorf("EDS carries a load assignment of the DNS cluster")
		}
	}
	for _, name := range []string{translate.TracingClusterName("pub"), translate.RateLimitCluster} {
		dc := clusters[name]
		if dc == nil || dc.GetType() != cluster.Cluster_STRICT_DNS {
			t.Fatalf("%s: %v, want a STRICT_DNS cluster", name, dc)
		}
		if got := caresServers(t, dc.GetTypedDnsResolverConfig().GetTypedConfig().GetValue()); got != "[127.0.23.53:53 10.96.0.10:53]" {
			t.Errorf("%s resolvers %s, want the --dns-resolvers ones", name, got)
		}
	}

	cache := translate.NewCache()
	cached := cache.ForKind(r, "internal", translate.Gateway, cache.Shared(r, "internal"))
	for _, typ := range []string{resource.ClusterType, resource.EndpointType} {
		if len(cached[typ]) != len(set[typ]) {
			t.Fatalf("cache: %d %s, want %d", len(cached[typ]), typ, len(set[typ]))
		}
		for i := range set[typ] {
			if !proto.Equal(cached[typ][i], set[typ][i]) {
				t.Errorf("cache: %s %d differs", typ, i)
			}
		}
	}

	grpcSet := translate.Group(r, "internal", translate.GRPC)
	for _, res := range grpcSet[resource.ClusterType] {
		gc := res.(*cluster.Cluster)
		if gc.GetName() == "greeter/named" && (gc.GetType() != cluster.Cluster_LOGICAL_DNS || gc.GetClusterType() != nil) {
			t.Errorf("proxyless clients' greeter/named: %v, want type LOGICAL_DNS", gc)
		}
	}
	if c.GetType() == cluster.Cluster_LOGICAL_DNS {
		t.Errorf("building the gRPC set changed the gateways' cluster")
	}

	// Without resolvers: Envoy's default resolver (resolv.conf).
	plain := translate.Group(resolve(t, dnsConfig(model.DNSName{Host: "greeter.svc", Port: 50051}), model.Options{}), "internal", translate.Gateway)
	for _, res := range plain[resource.ClusterType] {
		pc := res.(*cluster.Cluster)
		var cfg dnscluster.DnsCluster
		if pc.GetClusterType() != nil {
			_ = pc.GetClusterType().GetTypedConfig().UnmarshalTo(&cfg)
		}
		if pc.GetTypedDnsResolverConfig() != nil || cfg.GetTypedDnsResolverConfig() != nil {
			t.Errorf("%s names resolvers without --dns-resolvers", pc.GetName())
		}
	}
}

func caresServers(t *testing.T, b []byte) string {
	t.Helper()
	var c cares.CaresDnsResolverConfig
	if err := proto.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range c.GetResolvers() {
		out = append(out, fmt.Sprintf("%s:%d", r.GetSocketAddress().GetAddress(), r.GetSocketAddress().GetPortValue()))
	}
	return fmt.Sprint(out)
}

// TestProxylessClientAndDNSUpstream: grpc-go's real xDS client takes the
// LOGICAL_DNS cluster of an upstream named by DNS (it NACKs any other DNS
// form), resolves the name itself and reaches the backend; nothing is
// NACKed.
func TestProxylessClientAndDNSUpstream(t *testing.T) {
	a := grpcBackend(t, "a")
	client, reg, ctx := proxyless(t, dnsConfig(model.DNSName{Host: "localhost", Port: a.Port()}), "dns-client")
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	resp, err := client.UnaryCall(rctx, &testgrpc.SimpleRequest{}, grpc.WaitForReady(true))
	if err != nil || resp.GetHostname() != "a" {
		t.Fatalf("RPC through the DNS upstream localhost:%d: %v %v", a.Port(), resp, err)
	}
	if nacks := counterSum(t, reg, "tlb_l7_xds_nacks_total"); nacks != 0 {
		t.Errorf("the client NACKed %v times", nacks)
	}
}
