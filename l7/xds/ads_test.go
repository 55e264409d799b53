package xds_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"

	"github.com/tlbproject/tlb/l7/validate"
	"github.com/tlbproject/tlb/l7/xds"
)

const gatewayKey = "gateway/edge"

var edgeEDS = []string{"shop/v1", "shop/v2", "todo/main"}

func namesFor(typ string) []string {
	switch typ {
	case resource.EndpointType:
		return edgeEDS
	case resource.RouteType:
		return []string{"http-203.0.113.10-80", "https-203.0.113.10-443"}
	case resource.SecretType:
		return []string{"shop"}
	}
	return nil // wildcard
}

func decode(t *testing.T, anys []*anypb.Any) []types.Resource {
	t.Helper()
	var out []types.Resource
	for _, a := range anys {
		m, err := a.UnmarshalNew()
		if err != nil {
			t.Fatalf("decode %s: %v", a.GetTypeUrl(), err)
		}
		out = append(out, m.(types.Resource))
	}
	return out
}

// sotwSync requests every type like Envoy and ACKs the first response of
// each; it returns the accepted responses by type.
func sotwSync(t *testing.T, c *sotwClient) map[string]*discovery.DiscoveryResponse {
	t.Helper()
	for _, typ := range allTypes {
		c.request(typ, namesFor(typ), "", "", nil)
	}
	got := map[string]*discovery.DiscoveryResponse{}
	for len(got) < len(allTypes) {
		r, err := c.next(5 * time.Second)
		if err != nil {
			t.Fatalf("initial sync, have %v: %v", slices.Collect(maps.Keys(got)), err)
		}
		got[r.GetTypeUrl()] = r
		c.ack(r, namesFor(r.GetTypeUrl()))
	}
	return got
}

// consistent checks that the received set references nothing missing and
// carries the server's current versions.
func consistent(t *testing.T, srv *xds.Server, got map[string]*discovery.DiscoveryResponse) {
	t.Helper()
	set := map[string][]types.Resource{}
	for typ, r := range got {
		set[typ] = decode(t, r.GetResources())
		if want := srv.Versions()[gatewayKey][typ]; r.GetVersionInfo() != want {
			t.Errorf("%s: version %q, server has %q", typ, r.GetVersionInfo(), want)
		}
	}
	if err := validate.Set(set); err != nil {
		t.Errorf("received set is not consistent: %v", err)
	}
}

func TestSotWConsistentSetThenOnlyEndpoints(t *testing.T) {
	r := startServer(t, "")
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080"))
	c := newSotw(t, dial(t, r.addr), node("gw-1", "edge", "gateway", schema))
	got := sotwSync(t, c)
	consistent(t, r.srv, got)

	rep := r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080", "198.51.100.21:8080"))
	if !slices.Equal(rep.Changed, []string{gatewayKey, "grpc/edge"}) {
		t.Fatalf("changed keys = %v", rep.Changed)
	}
	resp, err := c.next(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetTypeUrl() != resource.EndpointType {
		t.Fatalf("after an endpoint change got %s first, want only endpoints", resp.GetTypeUrl())
	}
	c.ack(resp, edgeEDS)
	if extra, err := c.next(700 * time.Millisecond); err == nil {
		t.Fatalf("after an endpoint change also got %s; only endpoints changed", extra.GetTypeUrl())
	}
	var n int
	for _, res := range decode(t, resp.GetResources()) {
		if res.(*endpoint.ClusterLoadAssignment).GetClusterName() == "shop/v1" {
			n = len(res.(*endpoint.ClusterLoadAssignment).GetEndpoints()[0].GetLbEndpoints())
		}
	}
	if n != 2 {
		t.Errorf("shop/v1 has %d endpoints after the change, want 2", n)
	}
	got[resource.EndpointType] = resp
	consistent(t, r.srv, got)
}

// deltaSync subscribes to every type and applies the first response of each.
func deltaSync(t *testing.T, c *deltaClient, initial map[string]map[string]string) {
	t.Helper()
	for _, typ := range allTypes {
		c.subscribe(typ, namesFor(typ), initial[typ])
	}
	seen := map[string]bool{}
	for len(seen) < len(allTypes) {
		r, err := c.next(5 * time.Second)
		if err != nil {
			t.Fatalf("initial delta sync, have %v: %v", seen, err)
		}
		seen[r.GetTypeUrl()] = true
		c.apply(r)
	}
}

func TestDeltaConsistentSetThenOnlyTheChangedResource(t *testing.T) {
	r := startServer(t, "")
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080"))
	c := newDelta(t, dial(t, r.addr), node("gw-1", "edge", "gateway", schema))
	deltaSync(t, c, nil)
	set := map[string][]types.Resource{}
	for typ, byName := range c.res {
		set[typ] = decode(t, slices.Collect(maps.Values(byName)))
	}
	if err := validate.Set(set); err != nil {
		t.Fatalf("delta set is not consistent: %v", err)
	}
	if len(c.have[resource.ClusterType]) != 3 || len(c.have[resource.ListenerType]) != 2 || len(c.have[resource.SecretType]) != 1 {
		t.Fatalf("delta set: %v", c.have)
	}

	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080", "198.51.100.21:8080"))
	resp, err := c.next(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, res := range resp.GetResources() {
		names = append(names, res.GetName())
	}
	if resp.GetTypeUrl() != resource.EndpointType || !slices.Equal(names, []string{"shop/v1"}) || len(resp.GetRemovedResources()) != 0 {
		t.Fatalf("delta after one endpoint change: type %s resources %v removed %v; want only endpoints shop/v1", resp.GetTypeUrl(), names, resp.GetRemovedResources())
	}
	c.apply(resp)
	if extra, err := c.next(700 * time.Millisecond); err == nil {
		t.Fatalf("delta sent more than the change: %s %d resources", extra.GetTypeUrl(), len(extra.GetResources()))
	}
}

// TestRestartResyncsWithoutChange: a client keeps its config while the
// server is down, and the restarted server (same config) produces the same
// versions, so the client's resync changes nothing.
func TestRestartResyncsWithoutChange(t *testing.T) {
	cfg := edgeConfig("198.51.100.20:8080")
	a := startServer(t, "")
	a.pub.Publish(context.Background(), cfg)
	addr := a.addr
	dc := newDelta(t, dial(t, addr), node("gw-d", "edge", "gateway", schema))
	deltaSync(t, dc, nil)
	sc := newSotw(t, dial(t, addr), node("gw-s", "edge", "gateway", schema))
	before := sotwSync(t, sc)
	versionsA := a.srv.Versions()

	a.stop()
	if _, err := dc.next(5 * time.Second); err == nil {
		t.Fatal("delta stream survived the server stop")
	}
	// The client still holds its last config while the server is away.
	if len(dc.have[resource.ClusterType]) != 3 {
		t.Fatalf("client lost its config: %v", dc.have)
	}

	b := startServer(t, addr)
	b.pub.Publish(context.Background(), cfg)
	if !maps.EqualFunc(versionsA, b.srv.Versions(), maps.Equal) {
		t.Fatalf("restarted server versions differ:\nA %v\nB %v", versionsA, b.srv.Versions())
	}

	// Delta: reconnect presenting the versions held; nothing is resent.
	dc2 := newDelta(t, dial(t, addr), node("gw-d", "edge", "gateway", schema))
	dc2.have = dc.have
	for _, typ := range allTypes {
		dc2.subscribe(typ, namesFor(typ), dc.have[typ])
	}
	for {
		resp, err := dc2.next(time.Second)
		if err != nil {
			break // quiet: nothing changed
		}
		if len(resp.GetResources()) > 0 || len(resp.GetRemovedResources()) > 0 {
			t.Fatalf("after restart the server resent %s %d resources, removed %v", resp.GetTypeUrl(), len(resp.GetResources()), resp.GetRemovedResources())
		}
	}

	// SotW: reconnect with the accepted versions; what comes back is the
	// same versions with equal resources.
	sc2 := newSotw(t, dial(t, addr), node("gw-s", "edge", "gateway", schema))
	for _, typ := range allTypes {
		sc2.request(typ, namesFor(typ), before[typ].GetVersionInfo(), "", nil)
	}
	for i := 0; i < len(allTypes); i++ {
		resp, err := sc2.next(time.Second)
		if err != nil {
			break
		}
		old := before[resp.GetTypeUrl()]
		if resp.GetVersionInfo() != old.GetVersionInfo() || len(resp.GetResources()) != len(old.GetResources()) {
			t.Fatalf("%s: after restart version %s (%d resources), before %s (%d)", resp.GetTypeUrl(), resp.GetVersionInfo(), len(resp.GetResources()), old.GetVersionInfo(), len(old.GetResources()))
		}
		oldByName := map[string]types.Resource{}
		for _, res := range decode(t, old.GetResources()) {
			oldByName[cachev3.GetResourceName(res)] = res
		}
		for _, res := range decode(t, resp.GetResources()) {
			if !proto.Equal(res, oldByName[cachev3.GetResourceName(res)]) {
				t.Fatalf("%s %s changed across the restart", resp.GetTypeUrl(), cachev3.GetResourceName(res))
			}
		}
	}
}

// TestOneGeneration: a client of another schema generation, or of a group
// this server does not serve, is refused before any resource is sent.
// The generation is derived from the build, not a constant.
func TestOneGeneration(t *testing.T) {
	r := startServer(t, "")
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080"))
	cc := dial(t, r.addr)
	for name, tc := range map[string]struct {
		group, schema string
		code          codes.Code
	}{
		"older generation": {"edge", "tlb.l7.v0", codes.FailedPrecondition},
		"no generation":    {"edge", "", codes.FailedPrecondition},
		"another group":    {"other", schema, codes.PermissionDenied},
	} {
		t.Run(name+"/sotw", func(t *testing.T) {
			c := newSotw(t, cc, node("gw-x", tc.group, "gateway", tc.schema))
			c.request(resource.ClusterType, nil, "", "", nil)
			resp, err := c.next(5 * time.Second)
			if err == nil {
				t.Fatalf("served %s to a refused client", resp.GetTypeUrl())
			}
			if status.Code(err) != tc.code {
				t.Fatalf("refused with %v, want %v", err, tc.code)
			}
		})
		t.Run(name+"/delta", func(t *testing.T) {
			c := newDelta(t, cc, node("gw-x", tc.group, "gateway", tc.schema))
			c.subscribe(resource.ClusterType, nil, nil)
			resp, err := c.next(5 * time.Second)
			if err == nil {
				t.Fatalf("served %s to a refused client", resp.GetTypeUrl())
			}
			if status.Code(err) != tc.code {
				t.Fatalf("refused with %v, want %v", err, tc.code)
			}
		})
	}
	if v := metricValue(t, r.reg, "tlb_l7_xds_refused_streams_total", map[string]string{"reason": "schema"}); v != 4 {
		t.Errorf("refused (schema) = %v, want 4", v)
	}
	// The right generation and group is served.
	c := newSotw(t, cc, node("gw-1", "edge", "gateway", schema))
	c.request(resource.ClusterType, nil, "", "", nil)
	if _, err := c.next(5 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestNACKKeepsLastAccepted: a NACK is logged with the resource names and
// counted; the rejected version is not pushed again, and the next version is.
func TestNACKKeepsLastAccepted(t *testing.T) {
	r := startServer(t, "")
	cfg := edgeConfig("198.51.100.20:8080")
	r.pub.Publish(context.Background(), cfg)
	c := newSotw(t, dial(t, r.addr), node("gw-1", "edge", "gateway", schema))
	got := sotwSync(t, c)
	accepted := got[resource.ListenerType].GetVersionInfo()

	// A new listener version arrives; the client rejects it.
	cfg.Gateways[0].Listeners = append(cfg.Gateways[0].Listeners, cfg.Gateways[0].Listeners[0])
	cfg.Gateways[0].Listeners[2].Name, cfg.Gateways[0].Listeners[2].Port = "alt", 8081
	r.pub.Publish(context.Background(), cfg)
	resp, err := c.next(5 * time.Second)
	if err != nil || resp.GetTypeUrl() != resource.ListenerType {
		t.Fatalf("want a listener update, got %v %v", resp.GetTypeUrl(), err)
	}
	c.request(resource.ListenerType, nil, accepted, resp.GetNonce(), &rpcstatus.Status{Code: int32(codes.InvalidArgument), Message: "test: listener refused"})
	if again, err := c.next(time.Second); err == nil {
		t.Fatalf("server pushed %s %s again after a NACK", again.GetTypeUrl(), again.GetVersionInfo())
	}
	if v := metricValue(t, r.reg, "tlb_l7_xds_nacks_total", map[string]string{"group": "edge", "type": resource.ListenerType}); v != 1 {
		t.Errorf("nacks metric = %v, want 1", v)
	}
	logs := r.logs.String()
	for _, want := range []string{"xDS NACK", "http-203.0.113.10-8081", "test: listener refused", "rejectedVersion=" + resp.GetVersionInfo(), "keptVersion=" + accepted} {
		if !strings.Contains(logs, want) {
			t.Errorf("NACK log lacks %q:\n%s", want, logs)
		}
	}
	// A fixed config is pushed.
	cfg.Gateways[0].Listeners[2].Port = 8082
	r.pub.Publish(context.Background(), cfg)
	next, err := c.next(5 * time.Second)
	if err != nil || next.GetTypeUrl() != resource.ListenerType || next.GetVersionInfo() == resp.GetVersionInfo() {
		t.Fatalf("want the next listener version, got %v %v", next.GetVersionInfo(), err)
	}
}

func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}
