package translate_test

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// change is one edit of a resolved config, as a source might make it:
// in place (a careless source reusing its slices) or by replacing.
type change struct {
	name string
	do   func(r *rand.Rand, res *model.Resolved)
}

func pickService(r *rand.Rand, res *model.Resolved) *model.Service {
	if len(res.Config.Services) == 0 {
		return nil
	}
	return &res.Config.Services[r.IntN(len(res.Config.Services))]
}

var changes = []change{
	{"endpoint changed in place", func(r *rand.Rand, res *model.Resolved) {
		if s := pickService(r, res); s != nil && len(s.Upstreams) > 0 && len(s.Upstreams[0].Endpoints) > 0 {
			e := &s.Upstreams[0].Endpoints[0]
			e.Addr = netip.AddrPortFrom(e.Addr.Addr(), uint16(1000+r.IntN(60000)))
		}
	}},
	{"endpoints replaced", func(r *rand.Rand, res *model.Resolved) {
		if s := pickService(r, res); s != nil && len(s.Upstreams) > 0 {
			us := slices.Clone(s.Upstreams)
			us[0].Endpoints = []model.Endpoint{{Addr: netip.AddrPortFrom(netip.MustParseAddr("198.51.100.99"), uint16(1+r.IntN(60000))), Weight: 1}}
			s.Upstreams = us
		}
	}},
	{"route timeout changed in place", func(r *rand.Rand, res *model.Resolved) {
		if s := pickService(r, res); s != nil && len(s.Routes) > 0 {
			s.Routes[r.IntN(len(s.Routes))].Timeout = time.Duration(1+r.IntN(100)) * time.Second
		}
	}},
	{"interceptors toggled", func(r *rand.Rand, res *model.Resolved) {
		if s := pickService(r, res); s != nil && len(s.Routes) > 0 {
			rt := &s.Routes[r.IntN(len(s.Routes))]
			if len(rt.Interceptors) > 0 {
				rt.Interceptors = nil
			} else {
				rt.Interceptors = chain.Chain{{Type: chain.TypeCSRF, Timeout: chain.Duration(time.Second)}}
			}
		}
	}},
	{"websocket toggled", func(r *rand.Rand, res *model.Resolved) {
		if s := pickService(r, res); s != nil && len(s.Routes) > 0 {
			rt := &s.Routes[r.IntN(len(s.Routes))]
			rt.WebSocket = !rt.WebSocket
		}
	}},
	{"host changed in place", func(r *rand.Rand, res *model.Resolved) {
		if s := pickService(r, res); s != nil && len(s.Hosts) > 0 {
			s.Hosts[0] = fmt.Sprintf("h%d.example.com", r.IntN(1000))
		}
	}},
	{"canary or route auth changed in place", func(r *rand.Rand, res *model.Resolved) {
		for i := range res.Config.Services {
			for j := range res.Config.Services[i].Routes {
				rt := &res.Config.Services[i].Routes[j]
				if rt.Canary != nil {
					rt.Canary.Percent = uint32(r.IntN(100))
				}
				if rt.Auth != nil && rt.Auth.Required != nil {
					*rt.Auth.Required = !*rt.Auth.Required
				}
			}
		}
	}},
	{"service added", func(r *rand.Rand, res *model.Resolved) {
		s := pickService(r, res)
		if s == nil {
			return
		}
		n := *s
		n.Name = fmt.Sprintf("added-%d", r.IntN(1000))
		if slices.ContainsFunc(res.Config.Services, func(o model.Service) bool { return o.Group == n.Group && o.Name == n.Name }) {
			return
		}
		n.Hosts = []string{n.Name + ".example.com"}
		n.Routes = slices.Clone(n.Routes)
		res.Config.Services = append(slices.Clone(res.Config.Services), n)
		for i := range res.Listeners {
			if el := &res.Listeners[i]; el.Group == s.Group && slices.Contains(el.Services, s.Name) {
				el.Services = append(slices.Clone(el.Services), n.Name)
				slices.Sort(el.Services)
			}
		}
	}},
	{"service removed", func(r *rand.Rand, res *model.Resolved) {
		if len(res.Config.Services) < 2 {
			return
		}
		i := r.IntN(len(res.Config.Services))
		s := res.Config.Services[i]
		res.Config.Services = slices.Delete(slices.Clone(res.Config.Services), i, i+1)
		for i := range res.Listeners {
			if el := &res.Listeners[i]; el.Group == s.Group {
				el.Services = slices.DeleteFunc(slices.Clone(el.Services), func(n string) bool { return n == s.Name })
			}
		}
	}},
}

// TestCacheMatchesPureTranslationThroughRandomChanges: whatever series
// of changes a config goes through, in place or not, the cache gives
// exactly what the pure translators give for every group and kind.
func TestCacheMatchesPureTranslationThroughRandomChanges(t *testing.T) {
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 3))
		res := loadExample(t)
		c := translate.NewCache()
		var trail []string
		for step := range 30 {
			ch := changes[r.IntN(len(changes))]
			ch.do(r, &res)
			trail = append(trail, ch.name)
			for _, g := range translate.Groups(res) {
				shared := c.Shared(res, g)
				for _, kind := range []translate.Kind{translate.Gateway, translate.GRPC} {
					got, want := c.ForKind(res, g, kind, shared), translate.Group(res, g, kind)
					if err := sameResources(got, want); err != nil {
						t.Fatalf("seed %d step %d (%v): %s/%s: %v", seed, step, trail, g, kind, err)
					}
				}
			}
			c.Sweep()
		}
	}
}

func sameResources(got, want translate.Resources) error {
	for typ := range want {
		if len(got[typ]) != len(want[typ]) {
			return fmt.Errorf("%s: %d resources, want %d", typ, len(got[typ]), len(want[typ]))
		}
		for i := range want[typ] {
			if !proto.Equal(got[typ][i], want[typ][i]) {
				return fmt.Errorf("%s %s differs from the pure translation", typ, cachev3.GetResourceName(want[typ][i]))
			}
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d types, want %d", len(got), len(want))
	}
	return nil
}

// TestCacheKeepsWhatAChangeDoesNotTouch: an endpoint change keeps every
// listener and route table (the same messages); a new service keeps the
// virtual host of every other host of its listener's route table.
func TestCacheKeepsWhatAChangeDoesNotTouch(t *testing.T) {
	res := loadExample(t)
	c := translate.NewCache()
	publish := func() translate.Resources {
		out := c.ForKind(res, "edge", translate.Gateway, c.Shared(res, "edge"))
		c.Sweep()
		return out
	}
	first := publish()
	changes[1].do(rand.New(rand.NewPCG(1, 1)), &res) // endpoints replaced
	second := publish()
	for _, typ := range []resource.Type{resource.ListenerType, resource.RouteType} {
		if !slices.Equal(first[typ], second[typ]) {
			t.Errorf("an endpoint change rebuilt a %s", typ)
		}
	}
	if slices.Equal(first[resource.EndpointType], second[resource.EndpointType]) {
		t.Fatal("the endpoint change did not reach the load assignments")
	}
	changes[7].do(rand.New(rand.NewPCG(1, 2)), &res) // service added
	third := publish()
	vhosts := func(set translate.Resources) map[string]*route.VirtualHost {
		out := map[string]*route.VirtualHost{}
		for _, r := range set[resource.RouteType] {
			for _, vh := range r.(*route.RouteConfiguration).GetVirtualHosts() {
				out[cachev3.GetResourceName(r)+" "+vh.GetName()] = vh
			}
		}
		return out
	}
	before, after := vhosts(second), vhosts(third)
	added, kept := 0, 0
	for k, vh := range after {
		switch old, ok := before[k]; {
		case !ok:
			added++
		case old == vh:
			kept++
		default:
			t.Errorf("virtual host %s rebuilt, though its routes did not change", k)
		}
	}
	if added == 0 || kept == 0 {
		t.Fatalf("%d virtual hosts added, %d kept: the change did not exercise the reuse", added, kept)
	}
}
