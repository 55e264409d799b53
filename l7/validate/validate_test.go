package validate_test

import (
	"strings"
	"testing"
	"time"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

func example(t *testing.T) translate.Resources {
	t.Helper()
	cfg, errs, _ := dsl.NewDir("../testdata/config", time.Now).Load()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	set := translate.Group(model.Resolve(cfg, model.Options{}), "edge", translate.Gateway)
	if err := validate.Set(set); err != nil {
		t.Fatalf("the example must be valid: %v", err)
	}
	return set
}

// clone deep-copies a set so a case can break it.
func clone(set translate.Resources) translate.Resources {
	out := translate.Resources{}
	for typ, items := range set {
		for _, it := range items {
			out[typ] = append(out[typ], proto.Clone(it).(types.Resource))
		}
	}
	return out
}

func TestSetRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		breakIt func(translate.Resources)
		want    string
	}{
		"dangling cluster": {func(s translate.Resources) {
			s[resource.ClusterType] = s[resource.ClusterType][1:]
		}, "dangling reference"},
		"dangling route configuration": {func(s translate.Resources) {
			s[resource.RouteType] = nil
		}, `RouteConfiguration "https-203.0.113.10-443"`},
		"dangling secret": {func(s translate.Resources) {
			s[resource.SecretType] = nil
		}, `Secret "public.shop"`},
		"duplicate filter chain match": {func(s translate.Resources) {
			for _, r := range s[resource.ListenerType] {
				l := r.(*listener.Listener)
				if len(l.FilterChains) == 1 && l.FilterChains[0].FilterChainMatch != nil {
					l.FilterChains = append(l.FilterChains, proto.Clone(l.FilterChains[0]).(*listener.FilterChain))
				}
			}
		}, "same match"},
		"two listeners on one port": {func(s translate.Resources) {
			l := proto.Clone(s[resource.ListenerType][0]).(*listener.Listener)
			l.Name = "copy"
			s[resource.ListenerType] = append(s[resource.ListenerType], l)
		}, "already used"},
		"duplicate name": {func(s translate.Resources) {
			s[resource.ClusterType] = append(s[resource.ClusterType], s[resource.ClusterType][0])
		}, "duplicate name"},
		"invalid field inside an Any (HCM without stat_prefix)": {func(s translate.Resources) {
			l := s[resource.ListenerType][0].(*listener.Listener)
			var m hcm.HttpConnectionManager
			if err := l.FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(&m); err != nil {
				panic(err)
			}
			m.StatPrefix = ""
			a, _ := anypb.New(&m)
			l.FilterChains[0].Filters[0].ConfigType = &listener.Filter_TypedConfig{TypedConfig: a}
		}, "StatPrefix"},
		"invalid top-level field (route without match)": {func(s translate.Resources) {
			rc := s[resource.RouteType][0].(*route.RouteConfiguration)
			rc.VirtualHosts[0].Routes[0].Match = nil
		}, "Match"},
		"unknown type in an Any": {func(s translate.Resources) {
			l := s[resource.ListenerType][0].(*listener.Listener)
			l.FilterChains[0].Filters[0].ConfigType = &listener.Filter_TypedConfig{TypedConfig: &anypb.Any{TypeUrl: "type.googleapis.com/no.such.Type"}}
		}, "cannot unpack"},
	} {
		t.Run(name, func(t *testing.T) {
			set := clone(example(t))
			tc.breakIt(set)
			err := validate.Set(set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error with %q, got %v", tc.want, err)
			}
		})
	}
}
