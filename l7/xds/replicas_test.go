package xds_test

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// history is what a long-running replica saw: a first config where "shop"
// owns its host and route, then one where a newer service claims the same
// route (a conflict), another namespace claims the host without a
// delegation, and a third service turns invalid (rejected).
func history() (first, now model.Config) {
	first = edgeConfig("198.51.100.20:8080")
	first.Services[0].Namespace, first.Services[0].Created = "shop", time.Unix(100, 0)
	ok := model.Service{Name: "extra", Group: "edge", Namespace: "shop", Created: time.Unix(150, 0), Hosts: []string{"extra.example.com"},
		Listeners: []model.ListenerRef{{Gateway: "public", Listener: "web"}},
		Upstreams: []model.Upstream{{Name: "u", Endpoints: []model.Endpoint{{Addr: ap("198.51.100.60:80"), Weight: 1}}}},
		Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "u", Weight: 1}}}}}
	first.Services = append(first.Services, ok)

	now = edgeConfig("198.51.100.20:8080", "198.51.100.21:8080")
	now.Services[0].Namespace, now.Services[0].Created = "shop", time.Unix(100, 0)
	rival := now.Services[0]
	rival.Name, rival.Created, rival.Origin = "rival", time.Unix(50, 0), "shop/rival" // older: it wins the route
	rival.Upstreams = []model.Upstream{{Name: "v1", Endpoints: []model.Endpoint{{Addr: ap("198.51.100.70:80"), Weight: 1}}}, {Name: "v2"}}
	intruder := ok
	intruder.Name, intruder.Namespace, intruder.Created, intruder.Origin = "intruder", "evil", time.Unix(200, 0), "evil/intruder"
	intruder.Routes = []model.Route{{Prefix: "/admin", Targets: []model.WeightedTarget{{Upstream: "u", Weight: 1}}}}
	broken := ok
	broken.Routes = []model.Route{{Prefix: "no-slash", Targets: []model.WeightedTarget{{Upstream: "u", Weight: 1}}}}
	now.Services = append(now.Services, rival, intruder, broken)
	return first, now
}

// served fetches every resource a gateway of edge is sent, by type and
// name, as the bytes on the wire.
func served(t *testing.T, addr string) map[string][]byte {
	t.Helper()
	c := newDelta(t, dial(t, addr), node("gw-replica", "edge", "gateway", schema))
	deltaSync(t, c, nil)
	out := map[string][]byte{}
	for typ, byName := range c.res {
		for name, a := range byName {
			out[typ+"/"+name] = a.GetValue()
		}
	}
	return out
}

// TestReplicasStartedApartServeIdenticalBytes: a replica that went
// through a history of configs and one started afterwards over the same
// inputs serve the same bytes with the same versions, including what the
// conflicts and the rejected object decided.
func TestReplicasStartedApartServeIdenticalBytes(t *testing.T) {
	first, now := history()
	old := startServer(t, "")
	old.pub.Publish(context.Background(), first)
	rep := old.pub.Publish(context.Background(), now)
	var rejected []string
	for _, p := range rep.Problems {
		if p.Rejected {
			rejected = append(rejected, p.Name)
		}
	}
	slices.Sort(rejected)
	if !slices.Equal(slices.Compact(rejected), []string{"extra", "intruder", "shop"}) {
		t.Fatalf("the history did not exercise a conflict, an ownership refusal and a rejected object: %v", rep.Problems)
	}

	fresh := startServer(t, "")
	fresh.pub.Publish(context.Background(), now)

	if !maps.EqualFunc(old.srv.Versions(), fresh.srv.Versions(), maps.Equal) {
		t.Fatalf("versions differ:\nold   %v\nfresh %v", old.srv.Versions(), fresh.srv.Versions())
	}
	a, b := served(t, old.addr), served(t, fresh.addr)
	if len(a) < 8 || len(a[resource.SecretType+"/shop"]) == 0 {
		t.Fatalf("too little served to compare: %v", slices.Sorted(maps.Keys(a)))
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			t.Errorf("%s differs between the replicas", k)
		}
	}
	if len(a) != len(b) {
		t.Errorf("the replicas serve %d and %d resources", len(a), len(b))
	}
}

// TestNothingServedBeforeTheFirstPublish: a gateway that connects before
// the server has a complete config (a restarted l7 still reading its
// sources) gets no response at all, so it keeps what it has, and gets the
// config once it is published.
func TestNothingServedBeforeTheFirstPublish(t *testing.T) {
	r := startServer(t, "")
	c := newDelta(t, dial(t, r.addr), node("gw-early", "edge", "gateway", schema))
	for _, typ := range allTypes {
		c.subscribe(typ, namesFor(typ), nil)
	}
	if resp, err := c.next(time.Second); err == nil {
		t.Fatalf("sent %s (%d resources, removed %v) before anything was published", resp.GetTypeUrl(), len(resp.GetResources()), resp.GetRemovedResources())
	}
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080"))
	seen := map[string]bool{}
	for len(seen) < len(allTypes) {
		resp, err := c.next(5 * time.Second)
		if err != nil {
			t.Fatalf("after the publish, have %v: %v", seen, err)
		}
		seen[resp.GetTypeUrl()] = true
		c.apply(resp)
	}
}
