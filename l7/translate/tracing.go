package translate

import (
	"net"
	"net/netip"
	"strconv"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tracev3 "github.com/envoyproxy/go-control-plane/envoy/config/trace/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/model"
)

// OpenTelemetryTracer is the name of Envoy's OpenTelemetry tracer.
const OpenTelemetryTracer = "envoy.tracers.opentelemetry"

// otlpTimeout bounds one export of spans to the collector.
const otlpTimeout = 5 * time.Second

// TracingClusterName is the cluster of a gateway's OTLP collector. It has
// no "/", so it never meets a service's "service/upstream" cluster.
func TracingClusterName(gateway string) string { return "tlb-otlp-" + gateway }

// tracingClusters returns one cluster per gateway of the group that
// exports spans: gRPC (HTTP/2) to the collector, static for an IP
// address, strict DNS for a name.
func tracingClusters(r model.Resolved, group string) []*cluster.Cluster {
	var out []*cluster.Cluster
	for _, g := range r.Config.Gateways {
		if g.Group != group || g.Tracing == nil {
			continue
		}
		c := tracingCluster(g.Name, g.Tracing.Collector)
		withDNSResolvers(c, r.DNSResolvers)
		out = append(out, c)
	}
	return out
}

func tracingCluster(gateway, collector string) *cluster.Cluster {
	name := TracingClusterName(gateway)
	host, port, _ := net.SplitHostPort(collector) // checked by model.CheckGateway
	p, _ := strconv.ParseUint(port, 10, 16)
	kind := cluster.Cluster_STRICT_DNS
	if a, err := netip.ParseAddr(host); err == nil {
		kind, host = cluster.Cluster_STATIC, a.String()
	}
	h2 := &upstreamhttp.HttpProtocolOptions{UpstreamProtocolOptions: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_{
		ExplicitHttpConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &core.Http2ProtocolOptions{}},
		},
	}}
	return &cluster.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: kind},
		ConnectTimeout:       dur(connectTimeout),
		LoadAssignment: &endpoint.ClusterLoadAssignment{ClusterName: name, Endpoints: []*endpoint.LocalityLbEndpoints{{
			LbEndpoints: []*endpoint.LbEndpoint{{HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{
				Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
					Address: host, PortSpecifier: &core.SocketAddress_PortValue{PortValue: uint32(p)},
				}}},
			}}}},
		}}},
		TypedExtensionProtocolOptions: map[string]*anypb.Any{
			"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(h2),
		},
	}
}

// hcmTracing is the connection manager's tracing for a listener of a
// gateway that exports spans, nil otherwise (Envoy then creates no span
// and forwards traceparent untouched, as any header).
func hcmTracing(t listenerTracing) *hcm.HttpConnectionManager_Tracing {
	if t.cluster == "" {
		return nil
	}
	otel := &tracev3.OpenTelemetryConfig{
		GrpcService: &core.GrpcService{
			TargetSpecifier: &core.GrpcService_EnvoyGrpc_{EnvoyGrpc: &core.GrpcService_EnvoyGrpc{ClusterName: t.cluster}},
			Timeout:         dur(otlpTimeout),
		},
		ServiceName: t.serviceName,
	}
	return &hcm.HttpConnectionManager_Tracing{
		RandomSampling: &typev3.Percent{Value: t.samplePercent},
		Provider: &tracev3.Tracing_Http{Name: OpenTelemetryTracer, ConfigType: &tracev3.Tracing_Http_TypedConfig{
			TypedConfig: mustAny(otel),
		}},
	}
}

// listenerTracing is what a listener's connection manager needs of its
// gateway's tracing; the zero value exports nothing. Comparable, so the
// cache sees a change.
type listenerTracing struct {
	cluster       string
	serviceName   string
	samplePercent float64
}

func tracingOf(el model.EnvoyListener) listenerTracing {
	if el.Tracing.Collector == "" {
		return listenerTracing{}
	}
	return listenerTracing{cluster: TracingClusterName(el.Ref.Gateway), serviceName: el.Tracing.ServiceName, samplePercent: el.Tracing.SamplePercent}
}

// tracingClusters is tracingClusters, an unchanged cluster the same
// pointer as last time.
func (c *Cache) tracingClusters(r model.Resolved, group string) []*cluster.Cluster {
	cs := tracingClusters(r, group)
	for i := range cs {
		cs[i] = intern(c.shared, cs[i])
	}
	return cs
}
