package translate

import (
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	extauthz "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
)

// AuthzCluster is the static bootstrap cluster through which a gateway's
// Envoy reaches the authorization service of the l7 beside it.
const AuthzCluster = "tlb-l7-authz"

// DefaultAuthzSocket is the unix socket, in the gateway pod's shared
// volume, where l7 serves the authorization service and Envoy's
// AuthzCluster connects.
const DefaultAuthzSocket = "/run/tlb/authz.sock"

// ExtAuthzFilter is the HTTP filter name of Envoy's ext_authz, the key of
// its per-route configuration.
const ExtAuthzFilter = wellknown.HTTPExternalAuthorization

// authzTimeout bounds one Check as Envoy sees it. Every interceptor has
// its own, shorter timeout in the service, which answers 503 when one runs
// out; this is only the backstop for a service that does not answer. It
// is a constant so that changing a route's interceptor timeouts never
// changes (and drains) a listener.
const authzTimeout = chain.MaxTimeout

// AuthzStaticCluster is the bootstrap cluster AuthzCluster: the l7 beside
// Envoy on the unix socket path, over HTTP/2 (gRPC), the way the bootstrap
// reaches ADS.
func AuthzStaticCluster(socket string) *cluster.Cluster {
	addr := &core.Address{Address: &core.Address_Pipe{Pipe: &core.Pipe{Path: socket}}}
	opts := &upstreamhttp.HttpProtocolOptions{UpstreamProtocolOptions: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_{
		ExplicitHttpConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
				Http2ProtocolOptions: &core.Http2ProtocolOptions{ConnectionKeepalive: &core.KeepaliveSettings{
					Interval: dur(30 * time.Second), Timeout: dur(5 * time.Second)}},
			},
		},
	}}
	return &cluster.Cluster{
		Name:                 AuthzCluster,
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_STATIC},
		ConnectTimeout:       dur(time.Second),
		LoadAssignment: &endpoint.ClusterLoadAssignment{ClusterName: AuthzCluster, Endpoints: []*endpoint.LocalityLbEndpoints{{
			LbEndpoints: []*endpoint.LbEndpoint{{HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{Address: addr}}}},
		}}},
		TypedExtensionProtocolOptions: map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(opts)},
	}
}

// hasInterceptors reports whether a route of svcs lists interceptors.
func hasInterceptors(svcs []model.Service) bool {
	for _, s := range svcs {
		for _, r := range s.Routes {
			if len(r.Interceptors) > 0 {
				return true
			}
		}
	}
	return false
}

// extAuthzFilter calls the authorization service over gRPC (API v3) on
// every request of a route that does not disable it. Fail closed: when the
// service cannot be reached the client gets 503, not the upstream.
func extAuthzFilter() *hcm.HttpFilter {
	cfg := &extauthz.ExtAuthz{
		Services: &extauthz.ExtAuthz_GrpcService{GrpcService: &core.GrpcService{
			TargetSpecifier: &core.GrpcService_EnvoyGrpc_{EnvoyGrpc: &core.GrpcService_EnvoyGrpc{ClusterName: AuthzCluster}},
			Timeout:         dur(authzTimeout),
		}},
		TransportApiVersion: core.ApiVersion_V3,
		FailureModeAllow:    false,
		StatusOnError:       &typev3.HttpStatus{Code: typev3.StatusCode_ServiceUnavailable},
	}
	return &hcm.HttpFilter{Name: ExtAuthzFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(cfg)}}
}

// authzPerRoute is a route's ext_authz configuration: its chain as the
// context extension chain.Key, or disabled when it has none, so Envoy
// never calls the service for it.
func authzPerRoute(r model.Route) *anypb.Any {
	if len(r.Interceptors) == 0 {
		return mustAny(&extauthz.ExtAuthzPerRoute{Override: &extauthz.ExtAuthzPerRoute_Disabled{Disabled: true}})
	}
	value, err := chain.Encode(r.Interceptors)
	if err != nil {
		// model.CheckService refused such a route; should one get here,
		// send a value the service cannot decode, so it answers 500
		// rather than the route going unchecked.
		value = "invalid: " + err.Error()
	}
	return mustAny(&extauthz.ExtAuthzPerRoute{Override: &extauthz.ExtAuthzPerRoute_CheckSettings{
		CheckSettings: &extauthz.CheckSettings{ContextExtensions: map[string]string{chain.Key: value}},
	}})
}
