package translate_test

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestCacheMatchesPureTranslation: through a series of changes, the cache
// gives exactly what the pure translators give, and reuses unchanged
// resources (same pointers).
func TestCacheMatchesPureTranslation(t *testing.T) {
	r := loadExample(t)
	c := translate.NewCache()
	check := func(step string, r model.Resolved) translate.Resources {
		t.Helper()
		var out translate.Resources
		for _, g := range translate.Groups(r) {
			shared := c.Shared(r, g)
			for _, kind := range []translate.Kind{translate.Gateway, translate.GRPC} {
				got, want := c.ForKind(r, g, kind, shared), translate.Group(r, g, kind)
				for typ := range want {
					if len(got[typ]) != len(want[typ]) {
						t.Fatalf("%s: %s/%s %s: %d resources, want %d", step, g, kind, typ, len(got[typ]), len(want[typ]))
					}
					for i := range want[typ] {
						if !proto.Equal(got[typ][i], want[typ][i]) {
							t.Fatalf("%s: %s/%s %s[%d] differs from the pure translation", step, g, kind, typ, i)
						}
					}
				}
				if g == "edge" && kind == translate.Gateway {
					out = got
				}
			}
		}
		c.Sweep()
		return out
	}
	first := check("first", r)
	again := check("unchanged", r)
	for typ := range first {
		for i := range first[typ] {
			if typ != resource.ListenerType && typ != resource.SecretType && first[typ][i] != again[typ][i] {
				t.Errorf("unchanged %s[%d] was rebuilt", typ, i)
			}
		}
	}
	// Change one endpoint of one service in place, as a careless source might.
	svcs := r.Config.Services
	for i := range svcs {
		if svcs[i].Name == "shop" {
			svcs[i].Upstreams[0].Endpoints[0].Addr = netip.MustParseAddrPort("198.51.100.29:8080")
		}
	}
	changed := check("endpoint changed", r)
	rebuilt := 0
	for i := range changed[resource.EndpointType] {
		if changed[resource.EndpointType][i] != again[resource.EndpointType][i] {
			rebuilt++
		}
	}
	if rebuilt != 2 { // shop/v1 and shop/v2 belong to the changed service
		t.Errorf("%d endpoint resources rebuilt, want the changed service's 2", rebuilt)
	}
	shopRoutes := slices.IndexFunc(changed[resource.RouteType], func(r types.Resource) bool {
		return cachev3.GetResourceName(r) == "https-203.0.113.10-443"
	})
	if shopRoutes < 0 {
		t.Fatal("no route configuration for the shop's listener")
	}
	if changed[resource.RouteType][shopRoutes] != again[resource.RouteType][shopRoutes] {
		t.Errorf("routes rebuilt though no route changed")
	}
	// A route change rebuilds the route table.
	for i := range svcs {
		if svcs[i].Name == "shop" {
			svcs[i].Routes[0].Timeout = 42e9
		}
	}
	c2 := check("route changed", r)
	if c2[resource.RouteType][shopRoutes] == changed[resource.RouteType][shopRoutes] {
		t.Errorf("route table not rebuilt after a route change")
	}
	for i := range c2[resource.RouteType] {
		if i != shopRoutes && c2[resource.RouteType][i] != changed[resource.RouteType][i] {
			t.Errorf("the route table of another listener was rebuilt: %s", cachev3.GetResourceName(c2[resource.RouteType][i]))
		}
	}
	// A health check changed in place (behind a pointer) rebuilds the cluster.
	for i := range svcs {
		if svcs[i].Name == "shop" {
			svcs[i].Upstreams[0].HealthCheck.Path = "/ready"
			svcs[i].Upstreams[0].HealthCheck.ExpectedStatuses[0].Max = 204
		}
	}
	check("health check changed", r)
}
