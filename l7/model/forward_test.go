package model_test

import (
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

// forwardConfig is a gateway with a TCP listener forwarding to a/u and
// a/v by weight and a UDP listener forwarding to a/v.
func forwardConfig() model.Config {
	g := gw("tcp", "203.0.113.31", 9300, model.TCP)
	g.Listeners[0].Target = "" // gw gives TCP listeners a target
	g.Listeners[0].Forward = []model.WeightedCluster{{Cluster: "a/u", Weight: 7}, {Cluster: "a/v", Weight: 3}}
	g.Listeners = append(g.Listeners, model.Listener{Name: "udp", VIP: g.Listeners[0].VIP, Port: 5300, Protocol: model.UDP,
		Forward: []model.WeightedCluster{{Cluster: "a/v", Weight: 1}}})
	s := svc("a", "a.example.com", "/")
	s.Upstreams = append(s.Upstreams, model.Upstream{Name: "v"})
	return model.Config{Gateways: []model.Gateway{g}, Services: []model.Service{s}}
}

func TestCheckForwardListeners(t *testing.T) {
	r := model.Resolve(forwardConfig(), model.Options{})
	if len(r.Problems) > 0 || len(r.Listeners) != 2 {
		t.Fatalf("valid TCP and UDP listeners: problems %v, listeners %d", r.Problems, len(r.Listeners))
	}
	for name, tc := range map[string]struct {
		edit  func(c *model.Config)
		field string
	}{
		"tcp target and forward": {func(c *model.Config) { c.Gateways[0].Listeners[0].Target = "a/u" }, "listeners[0].forward: a TCP listener has a target or forward clusters, not both"},
		"tcp nothing":            {func(c *model.Config) { c.Gateways[0].Listeners[0].Forward = nil }, "listeners[0].target"},
		"all weights zero": {func(c *model.Config) {
			c.Gateways[0].Listeners[0].Forward[0].Weight, c.Gateways[0].Listeners[0].Forward[1].Weight = 0, 0
		}, "every cluster weighs 0"},
		"unknown cluster":  {func(c *model.Config) { c.Gateways[0].Listeners[0].Forward[1].Cluster = "a/nope" }, "listeners[0].forward[1].cluster"},
		"udp two clusters": {func(c *model.Config) { c.Gateways[0].Listeners[1].Forward = c.Gateways[0].Listeners[0].Forward }, "a UDP listener forwards to exactly one cluster, got 2"},
		"udp target":       {func(c *model.Config) { c.Gateways[0].Listeners[1].Target = "a/u" }, "listeners[1].target"},
		"forward on HTTP":  {func(c *model.Config) { c.Gateways[0].Listeners[0].Protocol = model.HTTP }, "only TCP and UDP listeners forward"},
		"another group":    {func(c *model.Config) { c.Services[0].Group = "other" }, "no upstream \"a/u\" (service/upstream) in group \"edge\""},
	} {
		t.Run(name, func(t *testing.T) {
			c := forwardConfig()
			tc.edit(&c)
			r := model.Resolve(c, model.Options{})
			if len(r.Config.Gateways) != 0 {
				t.Errorf("gateway accepted")
			}
			var msgs []string
			for _, p := range r.Problems {
				msgs = append(msgs, p.Error())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tc.field) {
				t.Fatalf("problems %v, want one naming %q", msgs, tc.field)
			}
		})
	}
}

// TestUDPListenerServesNoRoutes: a service naming a UDP listener is not
// served there, and says why.
func TestUDPListenerServesNoRoutes(t *testing.T) {
	c := forwardConfig()
	c.Services[0].Listeners = []model.ListenerRef{{Gateway: c.Gateways[0].Name, Listener: "udp"}}
	r := model.Resolve(c, model.Options{})
	for _, el := range r.Listeners {
		if len(el.Services) > 0 {
			t.Fatalf("listener %s serves %v", el.Name, el.Services)
		}
	}
	var msgs []string
	for _, p := range r.Problems {
		msgs = append(msgs, p.Error())
	}
	if !strings.Contains(strings.Join(msgs, "\n"), "is UDP; it forwards to its target and serves no routes") {
		t.Fatalf("problems %v; want the UDP listener named", msgs)
	}
}
