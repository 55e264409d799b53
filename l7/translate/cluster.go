package translate

import (
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlbproject/tlb/l7/model"
)

const connectTimeout = 5 * time.Second

// Clusters returns one cluster per upstream of the group's services: EDS,
// or DNS for an upstream named by DNS (dns.go). Upstreams reached by a
// sticky route use ring hash so the cookie pins a client to an endpoint.
func Clusters(r model.Resolved, group string) []*cluster.Cluster {
	sticky := stickyClusters(r, group)
	var out []*cluster.Cluster
	for _, s := range servicesOf(r, group) {
		for _, u := range s.Upstreams {
			name := model.ClusterName(s.Name, u.Name)
			c := &cluster.Cluster{
				Name:                          name,
				ClusterDiscoveryType:          &cluster.Cluster_Type{Type: cluster.Cluster_EDS},
				EdsClusterConfig:              &cluster.Cluster_EdsClusterConfig{EdsConfig: adsSource(), ServiceName: name},
				ConnectTimeout:                dur(connectTimeout),
				LbPolicy:                      cluster.Cluster_ROUND_ROBIN,
				PerConnectionBufferLimitBytes: u32(bufferLimit),
			}
			if sticky[name] {
				c.LbPolicy = cluster.Cluster_RING_HASH
			}
			if u.DNS != nil {
				dnsCluster(c, *u.DNS, s.Group, r.DNSResolvers)
			}
			applyHealth(c, s, u, sticky[name])
			c.TransportSocket = upstreamTLS(u)
			if u.HTTP2 {
				opts := &upstreamhttp.HttpProtocolOptions{UpstreamProtocolOptions: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_{
					ExplicitHttpConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
						ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
							Http2ProtocolOptions: &core.Http2ProtocolOptions{MaxConcurrentStreams: u32(maxStreamsPerConn)},
						},
					},
				}}
				c.TypedExtensionProtocolOptions = map[string]*anypb.Any{
					"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(opts),
				}
			}
			out = append(out, c)
		}
	}
	out = append(out, tracingClusters(r, group)...)
	return out
}

// stickyClusters returns the clusters targeted by a route with cookie
// stickiness.
func stickyClusters(r model.Resolved, group string) map[string]bool {
	out := map[string]bool{}
	for _, s := range servicesOf(r, group) {
		for _, rt := range s.Routes {
			if rt.Sticky == nil {
				continue
			}
			for _, t := range rt.Targets {
				out[model.ClusterName(s.Name, t.Upstream)] = true
			}
		}
	}
	return out
}

func wrapBool(v bool) *wrapperspb.BoolValue { return wrapperspb.Bool(v) }
