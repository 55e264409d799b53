package translate

import (
	"cmp"
	"slices"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlbproject/tlb/l7/model"
)

// Kind is the kind of xDS client a resource set is built for.
type Kind string

// The kinds of client served.
const (
	// Gateway is an Envoy gateway of a group.
	Gateway Kind = "gateway"
	// GRPC is a proxyless gRPC client using the group's routes.
	GRPC Kind = "grpc"
)

// Resources is a full resource set for one group and kind, keyed by xDS
// type URL, each list sorted by resource name.
type Resources map[resource.Type][]types.Resource

// RouteConfigName is the name of the RouteConfiguration of a group's
// proxyless gRPC clients. A gateway listener's is the listener's name.
func RouteConfigName(group string) string { return "routes/" + group }

// Groups returns the sorted names of every group that has a gateway or a
// service in r.
func Groups(r model.Resolved) []string {
	var gs []string
	for _, g := range r.Config.Gateways {
		gs = append(gs, g.Group)
	}
	for _, s := range r.Config.Services {
		gs = append(gs, s.Group)
	}
	slices.Sort(gs)
	return slices.Compact(gs)
}

// Group builds the whole resource set of a group for a kind of client.
func Group(r model.Resolved, group string, kind Kind) Resources {
	return ForKind(r, group, kind, Shared(r, group))
}

// Shared builds the resources every kind of client of a group shares:
// clusters and endpoints.
func Shared(r model.Resolved, group string) Resources {
	return Resources{
		resource.ClusterType:  asResources(Clusters(r, group)),
		resource.EndpointType: asResources(Endpoints(r, group)),
	}
}

// ForKind completes the shared resources with the kind's own listeners and
// routes (and, for gateways, secrets). shared is not modified.
func ForKind(r model.Resolved, group string, kind Kind, shared Resources) Resources {
	out := Resources{}
	for typ, items := range shared {
		out[typ] = items
	}
	switch kind {
	case GRPC:
		out[resource.ListenerType] = asResources(GRPCListeners(r, group))
		out[resource.RouteType] = asResources(GroupRoutes(r, group))
		grpcWithoutUpstreamTLS(out)
		grpcLogicalDNS(out)
	default:
		out[resource.ListenerType] = asResources(Listeners(r, group))
		out[resource.RouteType] = asResources(ListenerRoutes(r, group))
		out[resource.SecretType] = asResources(Secrets(r, group))
		withRateLimitCluster(out, r, group)
	}
	return out
}

func asResources[T types.Resource](in []T) []types.Resource {
	out := make([]types.Resource, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}

// proxylessServices are the services of a group its proxyless gRPC
// clients see: all but Gateway API's, which are served only on their
// listeners (ownership and the catch-all rule did not check their hosts
// for the whole group).
func proxylessServices(r model.Resolved, group string) []model.Service {
	return slices.DeleteFunc(servicesOf(r, group), func(s model.Service) bool { return s.GatewayAPI })
}

func servicesOf(r model.Resolved, group string) []model.Service {
	var out []model.Service
	for _, s := range r.Config.Services {
		if s.Group == group {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b model.Service) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func adsSource() *core.ConfigSource {
	return &core.ConfigSource{
		ResourceApiVersion:    core.ApiVersion_V3,
		ConfigSourceSpecifier: &core.ConfigSource_Ads{Ads: &core.AggregatedConfigSource{}},
	}
}

// mustAny packs m with deterministic map order, so equal configurations
// give equal bytes (and equal content hashes, versions and golden files).
func mustAny(m proto.Message) *anypb.Any {
	a := &anypb.Any{}
	err := anypb.MarshalFrom(a, m, proto.MarshalOptions{Deterministic: true})
	if err != nil {
		// anypb.New fails only for a nil or unregistered message, which
		// would be a bug in this package.
		panic("translate: pack " + string(proto.MessageName(m)) + ": " + err.Error())
	}
	return a
}

func dur(d time.Duration) *durationpb.Duration { return durationpb.New(d) }

func u32(v uint32) *wrapperspb.UInt32Value { return wrapperspb.UInt32(v) }
