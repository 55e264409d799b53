package xds_test

import (
	"context"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
)

// ackDelays returns the count and sum of tlb_l7_xds_ack_delay_seconds
// for typ.
func ackDelays(t *testing.T, reg *prometheus.Registry, typ string) (uint64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "tlb_l7_xds_ack_delay_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "type" && l.GetValue() == typ {
					return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return 0, 0
}

// waitAckCount waits until typ's ACK delays count n.
func waitAckCount(t *testing.T, reg *prometheus.Registry, typ string, n uint64) float64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, sum := ackDelays(t, reg, typ)
		if got == n {
			return sum
		}
		if got > n || time.Now().After(deadline) {
			t.Fatalf("ACK delays of %s: %d observed, want %d", typ, got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDeltaAckDelay: on a delta stream (what Envoy's bootstrap asks
// for), the time from a publish to the client's ACK of the response that
// carried it is observed once per ACK, includes the client's own time
// before it ACKs, and a NACK observes nothing.
func TestDeltaAckDelay(t *testing.T) {
	r := startServer(t, "")
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080"))
	c := newDelta(t, dial(t, r.addr), node("gw-1", "edge", "gateway", schema))
	deltaSync(t, c, nil)
	for _, typ := range allTypes {
		waitAckCount(t, r.reg, typ, 1) // the initial sync, from the stream's opening
	}
	_, before := ackDelays(t, r.reg, resource.EndpointType)

	// An endpoint change, ACKed after the client took 200 ms to apply it.
	const hold = 200 * time.Millisecond
	t0 := time.Now()
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080", "198.51.100.21:8080"))
	resp := nextOf(t, c, resource.EndpointType)
	time.Sleep(hold)
	c.apply(resp)
	sum := waitAckCount(t, r.reg, resource.EndpointType, 2)
	elapsed := time.Since(t0)
	if d := time.Duration((sum - before) * float64(time.Second)); d < hold || d > elapsed {
		t.Fatalf("ACK delay of the change: %v, want between the client's %v and the %v since the publish started", d, hold, elapsed)
	}

	// A NACKed change observes nothing; the next ACKed one is observed.
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.22:8080"))
	resp = nextOf(t, c, resource.EndpointType)
	if err := c.stream.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: resource.EndpointType, ResponseNonce: resp.GetNonce(),
		ErrorDetail: &rpcstatus.Status{Code: int32(codes.InvalidArgument), Message: "test: refused"}}); err != nil {
		t.Fatal(err)
	}
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.23:8080"))
	c.apply(nextOf(t, c, resource.EndpointType))
	waitAckCount(t, r.reg, resource.EndpointType, 3)
	if n, _ := ackDelays(t, r.reg, resource.ClusterType); n != 1 {
		t.Fatalf("clusters did not change, yet %d ACK delays of clusters", n)
	}
}

// TestSotwAckDelay: SotW streams are timed the same way.
func TestSotwAckDelay(t *testing.T) {
	r := startServer(t, "")
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080"))
	c := newSotw(t, dial(t, r.addr), node("gw-s", "edge", "gateway", schema))
	sotwSync(t, c)
	waitAckCount(t, r.reg, resource.EndpointType, 1)
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.21:8080"))
	resp, err := c.next(5 * time.Second)
	if err != nil || resp.GetTypeUrl() != resource.EndpointType {
		t.Fatalf("want an endpoint update, got %s %v", resp.GetTypeUrl(), err)
	}
	c.ack(resp, namesFor(resource.EndpointType))
	waitAckCount(t, r.reg, resource.EndpointType, 2)
}

// nextOf returns the next delta response, which must be of typ.
func nextOf(t *testing.T, c *deltaClient, typ string) *discovery.DeltaDiscoveryResponse {
	t.Helper()
	resp, err := c.next(5 * time.Second)
	if err != nil || resp.GetTypeUrl() != typ {
		t.Fatalf("want a %s response, got %s %v", typ, resp.GetTypeUrl(), err)
	}
	return resp
}
