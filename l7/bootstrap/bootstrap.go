package bootstrap

import (
	"fmt"
	"net/netip"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	overload "github.com/envoyproxy/go-control-plane/envoy/config/overload/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	downstreamconns "github.com/envoyproxy/go-control-plane/envoy/extensions/resource_monitors/downstream_connections/v3"
	fixedheap "github.com/envoyproxy/go-control-plane/envoy/extensions/resource_monitors/fixed_heap/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlbproject/tlb/l7/drain"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
)

// Gateway says what the bootstrap of one gateway holds.
type Gateway struct {
	// Group is the gateway group (node.cluster).
	Group string
	// Generation is the schema generation to declare (xds.Generation of
	// the l7 beside Envoy).
	Generation string
	// XDSSocket is the unix socket l7 serves ADS on.
	XDSSocket string
	// AuthzSocket is the unix socket l7 serves the authorization service
	// on (l7 serve --authz-listen unix://PATH); empty leaves the cluster
	// out, and a route with interceptors then fails closed (503).
	AuthzSocket string
	// AdminSocket is the unix socket of Envoy's admin API.
	AdminSocket string
	// Stats is the address of the read-only listener that exposes only
	// GET /stats/prometheus and GET /ready, for scraping and probes.
	Stats netip.AddrPort
	// MaxHeapBytes bounds Envoy's heap for the overload manager.
	MaxHeapBytes uint64
	// MaxConnections bounds downstream connections.
	MaxConnections uint64
}

// Names of the bootstrap's static resources.
const (
	XDSCluster   = "tlb-l7-xds"
	AdminCluster = "tlb-envoy-admin"
	StatsName    = "tlb-stats"
)

// Build returns the bootstrap. It fails on missing fields.
func Build(g Gateway) (*bootstrapv3.Bootstrap, error) {
	switch {
	case g.Group == "", g.Generation == "", g.XDSSocket == "", g.AdminSocket == "":
		return nil, fmt.Errorf("bootstrap: group, generation, xDS socket and admin socket are required")
	case !g.Stats.IsValid() || g.Stats.Port() == 0:
		return nil, fmt.Errorf("bootstrap: the stats listener needs an address and port, got %q", g.Stats)
	case g.MaxHeapBytes == 0 || g.MaxConnections == 0:
		return nil, fmt.Errorf("bootstrap: the heap and connection limits are required")
	}
	clusters := []*cluster.Cluster{xdsCluster(g.XDSSocket), adminCluster(g.AdminSocket)}
	if g.AuthzSocket != "" {
		clusters = append(clusters, translate.AuthzStaticCluster(g.AuthzSocket))
	}
	return &bootstrapv3.Bootstrap{
		Node: &core.Node{Cluster: g.Group, Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
			xds.MetaKind:   structpb.NewStringValue("gateway"),
			xds.MetaSchema: structpb.NewStringValue(g.Generation),
			// What l7 upgrades are checked against (xds.MetaBootstrap):
			// a newer l7 keeps serving this Envoy while it is equal.
			xds.MetaBootstrap: structpb.NewStringValue(xds.BootstrapGeneration()),
		}}},
		Admin: &bootstrapv3.Admin{Address: pipe(g.AdminSocket, 0o600)},
		DynamicResources: &bootstrapv3.Bootstrap_DynamicResources{
			AdsConfig: &core.ApiConfigSource{
				ApiType:                   core.ApiConfigSource_DELTA_GRPC,
				TransportApiVersion:       core.ApiVersion_V3,
				SetNodeOnFirstMessageOnly: true,
				GrpcServices: []*core.GrpcService{{TargetSpecifier: &core.GrpcService_EnvoyGrpc_{
					EnvoyGrpc: &core.GrpcService_EnvoyGrpc{ClusterName: XDSCluster, RetryPolicy: adsRetry()}}}},
			},
			CdsConfig: ads(),
			LdsConfig: ads(),
		},
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{
			Clusters:  clusters,
			Listeners: []*listener.Listener{statsListener(g.Stats)},
		},
		OverloadManager: overloadManager(g.MaxHeapBytes, g.MaxConnections),
		LayeredRuntime:  translate.RegexRuntime(),
	}, nil
}

// ADS reconnect backoff: while l7 is away (its pod is being replaced by
// an upgrade) Envoy keeps every resource it has and retries the stream
// from ADSRetryBase up to ADSRetryMax apart, so it is served again within
// ADSRetryMax of the new l7 listening. Envoy's default (500 ms to 30 s)
// would leave a gateway on its old config for up to 30 s after that.
const (
	ADSRetryBase = 250 * time.Millisecond
	ADSRetryMax  = 2 * time.Second
)

func adsRetry() *core.RetryPolicy {
	return &core.RetryPolicy{RetryBackOff: &core.BackoffStrategy{
		BaseInterval: durationpb.New(ADSRetryBase), MaxInterval: durationpb.New(ADSRetryMax)}}
}

func ads() *core.ConfigSource {
	return &core.ConfigSource{ResourceApiVersion: core.ApiVersion_V3,
		ConfigSourceSpecifier: &core.ConfigSource_Ads{Ads: &core.AggregatedConfigSource{}}}
}

func pipe(path string, mode uint32) *core.Address {
	return &core.Address{Address: &core.Address_Pipe{Pipe: &core.Pipe{Path: path, Mode: mode}}}
}

func staticCluster(name string, addr *core.Address) *cluster.Cluster {
	return &cluster.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(1e9),
		LoadAssignment: &endpoint.ClusterLoadAssignment{ClusterName: name, Endpoints: []*endpoint.LocalityLbEndpoints{{
			LbEndpoints: []*endpoint.LbEndpoint{{HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{Address: addr}}}},
		}}},
	}
}

// xdsCluster reaches l7 over its unix socket, HTTP/2 with keepalives.
func xdsCluster(socket string) *cluster.Cluster {
	c := staticCluster(XDSCluster, pipe(socket, 0))
	opts := &upstreamhttp.HttpProtocolOptions{UpstreamProtocolOptions: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_{
		ExplicitHttpConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
				Http2ProtocolOptions: &core.Http2ProtocolOptions{ConnectionKeepalive: &core.KeepaliveSettings{
					Interval: durationpb.New(30e9), Timeout: durationpb.New(5e9)}},
			},
		},
	}}
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(opts)}
	return c
}

// adminCluster is how the stats listener reaches the admin socket.
func adminCluster(socket string) *cluster.Cluster {
	return staticCluster(AdminCluster, pipe(socket, 0))
}

// statsListener serves GET /stats/prometheus and GET /ready from the admin
// API, and answers 404 to anything else: scraping and probes never reach
// the admin endpoints that change state (/quitquitquit, /runtime_modify,
// /drain_listeners, ...).
func statsListener(addr netip.AddrPort) *listener.Listener {
	get := []*route.HeaderMatcher{{Name: ":method", HeaderMatchSpecifier: &route.HeaderMatcher_StringMatch{
		StringMatch: &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_Exact{Exact: "GET"}}}}}
	toAdmin := func(path string) *route.Route {
		return &route.Route{
			Name:   path,
			Match:  &route.RouteMatch{PathSpecifier: &route.RouteMatch_Path{Path: path}, Headers: get},
			Action: &route.Route_Route{Route: &route.RouteAction{ClusterSpecifier: &route.RouteAction_Cluster{Cluster: AdminCluster}}},
		}
	}
	rc := &route.RouteConfiguration{Name: StatsName, VirtualHosts: []*route.VirtualHost{{
		Name: StatsName, Domains: []string{"*"},
		Routes: []*route.Route{
			toAdmin("/stats/prometheus"),
			toAdmin("/ready"),
			{Name: "not-found", Match: &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
				Action: &route.Route_DirectResponse{DirectResponse: &route.DirectResponseAction{Status: 404}}},
		},
	}}}
	m := &hcm.HttpConnectionManager{
		StatPrefix:     drain.StatsListenerPrefix,
		RouteSpecifier: &hcm.HttpConnectionManager_RouteConfig{RouteConfig: rc},
		HttpFilters: []*hcm.HttpFilter{{Name: wellknown.Router,
			ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&router.Router{})}}},
	}
	return &listener.Listener{
		Name:       StatsName,
		StatPrefix: drain.StatsListenerPrefix,
		Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
			Address: addr.Addr().String(), PortSpecifier: &core.SocketAddress_PortValue{PortValue: uint32(addr.Port())}}}},
		FilterChains: []*listener.FilterChain{{Filters: []*listener.Filter{{Name: wellknown.HTTPConnectionManager,
			ConfigType: &listener.Filter_TypedConfig{TypedConfig: mustAny(m)}}}}},
	}
}

// overloadManager sheds load before the heap or the connection count
// hurts the node.
func overloadManager(maxHeap, maxConns uint64) *overload.OverloadManager {
	const heap = "envoy.resource_monitors.fixed_heap"
	trigger := func(v float64) []*overload.Trigger {
		return []*overload.Trigger{{Name: heap, TriggerOneof: &overload.Trigger_Threshold{Threshold: &overload.ThresholdTrigger{Value: v}}}}
	}
	return &overload.OverloadManager{
		RefreshInterval: durationpb.New(250e6),
		ResourceMonitors: []*overload.ResourceMonitor{
			{Name: heap, ConfigType: &overload.ResourceMonitor_TypedConfig{TypedConfig: mustAny(&fixedheap.FixedHeapConfig{MaxHeapSizeBytes: maxHeap})}},
			{Name: "envoy.resource_monitors.global_downstream_max_connections", ConfigType: &overload.ResourceMonitor_TypedConfig{
				TypedConfig: mustAny(&downstreamconns.DownstreamConnectionsConfig{MaxActiveDownstreamConnections: int64(maxConns)})}},
		},
		Actions: []*overload.OverloadAction{
			{Name: "envoy.overload_actions.shrink_heap", Triggers: trigger(0.95)},
			{Name: "envoy.overload_actions.stop_accepting_requests", Triggers: trigger(0.98)},
			{Name: "envoy.overload_actions.disable_http_keepalive", Triggers: trigger(0.92)},
		},
	}
}

func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic("bootstrap: pack " + string(proto.MessageName(m)) + ": " + err.Error())
	}
	return a
}
