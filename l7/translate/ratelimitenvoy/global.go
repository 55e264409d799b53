package ratelimitenvoy

import (
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	rls "github.com/envoyproxy/go-control-plane/envoy/config/ratelimit/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	ratelimitenvoy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tlbproject/tlb/l7/ratelimit"
)

// GlobalFilterName is the name of Envoy's (global) rate limit HTTP filter.
const GlobalFilterName = "envoy.filters.http.ratelimit"

// ServiceCluster is the name of the cluster that reaches the rate limit
// service; GlobalFilter points at it and Cluster builds it.
const ServiceCluster = "ratelimit"

// serviceTimeout bounds each call to the rate limit service (Envoy's
// default is 20 ms); past it the request goes on unlimited (fail open).
const serviceTimeout = 100 * time.Millisecond

// GlobalFilter is the global rate limit entry of an HTTP connection
// manager for the gateways of one group; domain is the group, so every
// gateway of the group shares the service's counters and no other group
// does. The filter calls the service only for routes whose actions produce
// a descriptor (RouteRateLimits), so it is inert on the others. When the
// service fails or times out the request is allowed (failure_mode_deny
// false): an outage of the service must not take every limited route down;
// the local limit still holds. Rejected requests get 429 with Retry-After
// (the largest duration_until_reset of the over-limit descriptors) and the
// draft-03 X-RateLimit headers.
func GlobalFilter(domain string) *hcm.HttpFilter {
	f := &ratelimitenvoy.RateLimit{
		Domain:          domain,
		Timeout:         durationpb.New(serviceTimeout),
		FailureModeDeny: false,
		RateLimitService: &rls.RateLimitServiceConfig{
			GrpcService: &core.GrpcService{TargetSpecifier: &core.GrpcService_EnvoyGrpc_{
				EnvoyGrpc: &core.GrpcService_EnvoyGrpc{ClusterName: ServiceCluster},
			}},
			TransportApiVersion: core.ApiVersion_V3,
		},
		EnableXRatelimitHeaders: ratelimitenvoy.RateLimit_DRAFT_VERSION_03,
		EnableRetryAfterHeader:  true,
		RateLimitedStatus:       &typev3.HttpStatus{Code: typev3.StatusCode_TooManyRequests},
	}
	return &hcm.HttpFilter{
		Name:       GlobalFilterName,
		ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(f)},
	}
}

// RouteRateLimits are the rate limit actions of a route with global limits
// (RouteAction.rate_limits), each producing one descriptor per request:
//
//	perRoute:    [route=<Route>]
//	perClientIP: [route=<Route>, remote_address=<client IP>]
//
// The local filter never reads them: its per-route configuration carries
// its own actions, which take precedence. Nil when l has no global limit.
func RouteRateLimits(l ratelimit.RouteLimits) []*route.RateLimit {
	g := l.Global
	if g == nil {
		return nil
	}
	var out []*route.RateLimit
	if g.PerRoute != nil {
		out = append(out, &route.RateLimit{Actions: []*route.RateLimit_Action{routeAction(l.Route)}})
	}
	if g.PerClientIP != nil {
		out = append(out, &route.RateLimit{Actions: []*route.RateLimit_Action{routeAction(l.Route), clientIPAction()}})
	}
	return out
}

func routeAction(name string) *route.RateLimit_Action {
	return &route.RateLimit_Action{ActionSpecifier: &route.RateLimit_Action_GenericKey_{
		GenericKey: &route.RateLimit_Action_GenericKey{DescriptorKey: ratelimit.DescriptorRoute, DescriptorValue: name},
	}}
}

// Cluster is the cluster of the rate limit service at host:port (a DNS
// name such as the service's Kubernetes Service, resolved by Envoy), over
// HTTP/2 as gRPC needs.
func Cluster(host string, port uint32) *cluster.Cluster {
	opts := &upstreamhttp.HttpProtocolOptions{UpstreamProtocolOptions: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_{
		ExplicitHttpConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
				Http2ProtocolOptions: &core.Http2ProtocolOptions{},
			},
		},
	}}
	return &cluster.Cluster{
		Name:                 ServiceCluster,
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_STRICT_DNS},
		ConnectTimeout:       durationpb.New(time.Second),
		LbPolicy:             cluster.Cluster_ROUND_ROBIN,
		LoadAssignment: &endpoint.ClusterLoadAssignment{
			ClusterName: ServiceCluster,
			Endpoints: []*endpoint.LocalityLbEndpoints{{LbEndpoints: []*endpoint.LbEndpoint{{
				HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{
					Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
						Address: host, PortSpecifier: &core.SocketAddress_PortValue{PortValue: port},
					}}},
				}},
			}}}},
		},
		TypedExtensionProtocolOptions: map[string]*anypb.Any{
			"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(opts),
		},
	}
}
