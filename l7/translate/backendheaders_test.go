package translate_test

import (
	"net/netip"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// TestTargetHeaders: a target's header edits go on its weighted cluster
// only, the other target's requests untouched; a lone target with edits
// is a weighted cluster too (a plain cluster carries no headers).
func TestTargetHeaders(t *testing.T) {
	ep := []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.1:80"), Weight: 1}}
	v1 := &model.HeaderRules{Request: model.HeaderEdits{Set: map[string]string{"backend": "v1"}, Remove: []string{"x-drop"}},
		Response: model.HeaderEdits{Add: map[string]string{"x-from": "v1"}}}
	cfg := model.Config{
		Gateways: []model.Gateway{{Name: "gw", Group: "g", Origin: "gw", Listeners: []model.Listener{{Name: "http", VIP: netip.MustParseAddr("203.0.113.1"), Port: 80, Protocol: model.HTTP}}}},
		Services: []model.Service{{Name: "web", Group: "g", Origin: "web", Hosts: []string{"web.example.com"},
			Listeners: []model.ListenerRef{{Gateway: "gw", Listener: "http"}},
			Upstreams: []model.Upstream{{Name: "v1", Endpoints: ep}, {Name: "v2", Endpoints: ep}},
			Routes: []model.Route{
				{Name: "split", Prefix: "/split", Targets: []model.WeightedTarget{{Upstream: "v1", Weight: 1, Headers: v1}, {Upstream: "v2", Weight: 1}}},
				{Name: "lone", Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "v1", Weight: 1, Headers: v1}}},
			}}},
	}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems %v", r.Problems)
	}
	if err := validate.Set(translate.Group(r, "g", translate.Gateway)); err != nil {
		t.Fatalf("validate: %v", err)
	}
	gatewaySet(t, r) // the cache builds the same
	rs := gatewayAPIRoutes(t, r)
	check := func(name string, n int) []*route.WeightedCluster_ClusterWeight {
		t.Helper()
		cs := rs[name].GetRoute().GetWeightedClusters().GetClusters()
		if len(cs) != n {
			t.Fatalf("%s: %d weighted clusters; want %d", name, len(cs), n)
		}
		c := cs[0]
		if c.GetName() != "web/v1" || len(c.GetRequestHeadersToAdd()) != 1 || c.GetRequestHeadersToAdd()[0].GetHeader().GetKey() != "backend" ||
			c.GetRequestHeadersToAdd()[0].GetHeader().GetValue() != "v1" || len(c.GetRequestHeadersToRemove()) != 1 ||
			len(c.GetResponseHeadersToAdd()) != 1 || c.GetResponseHeadersToAdd()[0].GetHeader().GetKey() != "x-from" {
			t.Errorf("%s: cluster %v; want web/v1 with its edits", name, c)
		}
		if len(rs[name].GetRequestHeadersToAdd()) != 0 {
			t.Errorf("%s: the route itself edits %v; want only the target", name, rs[name].GetRequestHeadersToAdd())
		}
		return cs
	}
	if c := check("web/split", 2)[1]; len(c.GetRequestHeadersToAdd())+len(c.GetResponseHeadersToAdd()) != 0 {
		t.Errorf("the other target's cluster %v edits headers", c)
	}
	check("web/lone", 1)
	// Two configurations equal but for one target's edits differ.
	other := cfg
	other.Services = []model.Service{cfg.Services[0].Clone()}
	other.Services[0].Routes[1].Targets[0].Headers = &model.HeaderRules{Request: model.HeaderEdits{Set: map[string]string{"backend": "other"}}}
	if cfg.Services[0].Equal(&other.Services[0]) || !cfg.Services[0].Equal(&cfg.Services[0]) {
		t.Errorf("Service.Equal does not see a target's header edits")
	}
	if cfg.Services[0].Routes[1].Targets[0].Headers.Request.Set["backend"] != "v1" {
		t.Errorf("Clone shares the target's header edits")
	}
}
