package model_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/model"
)

// world is a config whose services share hosts across namespaces, with
// delegations, a catch-all and a TCP gateway: every whole-config rule
// has something to decide.
func world() model.Config {
	in := func(s model.Service, ns string, sec int) model.Service {
		s.Namespace, s.Created, s.Origin = ns, time.Unix(int64(sec), 0), model.Origin(ns+"/"+s.Name)
		return s
	}
	shop := in(svc("shop", "shop.example.com", "/"), "team-a", 1)
	shop.Delegations = []model.Delegation{{Prefix: "/api", Namespaces: []string{"team-b"}}}
	return model.Config{
		Gateways: []model.Gateway{gw("g", "203.0.113.1", 80, model.HTTP), gw("t", "203.0.113.1", 443, model.TCP)},
		Services: []model.Service{
			shop,
			in(svc("api", "shop.example.com", "/api/v1"), "team-b", 2),
			in(svc("cart", "shop.example.com", "/cart"), "team-a", 3),
			in(svc("a", "x.example.com", "/p"), "team-c", 4),
			in(svc("any", "", "/"), "team-c", 5),
			svc("dsl", "y.example.com", "/"),
		},
	}
}

// TestResolverMatchesResolve: through random series of changes to the
// services (in place, as a careless source makes them, or replaced) and
// to the options, a Resolver that saw every earlier config resolves
// exactly as Resolve does: the same services, listeners and problems.
func TestResolverMatchesResolve(t *testing.T) {
	pick := func(r *rand.Rand, cfg *model.Config) *model.Service {
		return &cfg.Services[r.IntN(len(cfg.Services))]
	}
	edits := []struct {
		name string
		do   func(*rand.Rand, *model.Config, *model.Options)
	}{
		{"prefix changed in place", func(r *rand.Rand, c *model.Config, _ *model.Options) {
			pick(r, c).Routes[0].Prefix = []string{"/", "/api", "/api/v1", "/cart", "/p", "no-slash"}[r.IntN(6)]
		}},
		{"host changed in place", func(r *rand.Rand, c *model.Config, _ *model.Options) {
			if s := pick(r, c); len(s.Hosts) > 0 {
				s.Hosts[0] = []string{"shop.example.com", "x.example.com", "y.example.com", "*", "bad host"}[r.IntN(5)]
			}
		}},
		{"namespace or age changed", func(r *rand.Rand, c *model.Config, _ *model.Options) {
			s := pick(r, c)
			s.Namespace = []string{"", "team-a", "team-b", "team-c"}[r.IntN(4)]
			s.Created = time.Unix(int64(r.IntN(10)), 0)
		}},
		{"delegation changed in place", func(r *rand.Rand, c *model.Config, _ *model.Options) {
			for i := range c.Services {
				for j := range c.Services[i].Delegations {
					d := &c.Services[i].Delegations[j]
					d.Namespaces[0] = []string{"team-b", "team-c", "*"}[r.IntN(3)]
				}
			}
		}},
		{"upstream target renamed", func(r *rand.Rand, c *model.Config, _ *model.Options) {
			s := pick(r, c)
			s.Routes[0].Targets[0].Upstream = []string{"u", "missing"}[r.IntN(2)]
		}},
		{"service added or copied under its name", func(r *rand.Rand, c *model.Config, _ *model.Options) {
			n := pick(r, c).Clone()
			if r.IntN(2) == 0 {
				n.Name = fmt.Sprintf("n%d", r.IntN(5))
			}
			c.Services = append(slices.Clone(c.Services), n)
		}},
		{"service removed", func(r *rand.Rand, c *model.Config, _ *model.Options) {
			if len(c.Services) > 2 {
				i := r.IntN(len(c.Services))
				c.Services = slices.Delete(slices.Clone(c.Services), i, i+1)
			}
		}},
		{"catch-all namespaces changed", func(r *rand.Rand, _ *model.Config, o *model.Options) {
			o.CatchAllNamespaces = [][]string{nil, {"team-c"}, {"team-a", "team-c"}}[r.IntN(3)]
		}},
	}
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 4))
		cfg, opts := world(), model.Options{}
		resolver := model.NewResolver()
		var trail []string
		for step := range 40 {
			e := edits[r.IntN(len(edits))]
			e.do(r, &cfg, &opts)
			trail = append(trail, e.name)
			got, want := resolver.Resolve(cfg, opts), model.Resolve(cfg, opts)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d (%v):\nresolver: %+v\nResolve:  %+v", seed, step, trail, got, want)
			}
		}
	}
}
