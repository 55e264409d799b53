package console

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
)

// countingDirector is one director whose IPVS counters (and rejected
// configs) are the next of samples on each read.
type countingDirector struct {
	mu      sync.Mutex
	samples []Component
	n       int
}

func (d *countingDirector) ListEndpoints(context.Context) ([]Endpoint, error) {
	return []Endpoint{{Role: RoleDirector, Name: "dir-1", URL: "http://198.18.1.2:9100"}}, nil
}

func (d *countingDirector) ReadComponent(context.Context, Endpoint) Component {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.samples[min(d.n, len(d.samples)-1)]
	d.n++
	return c
}

func directorSample(conns443, conns80, bytes443, rejected float64) Component {
	return Component{Role: RoleDirector, Name: "dir-1", URL: "http://198.18.1.2:9100", Ready: true, Rejected: rejected, VIPsBound: -1,
		Traffic: map[string][]Sample{"203.0.113.10": {
			{Metric: "bytes_in_total", Labels: "port=443 protocol=tcp", Value: bytes443},
			{Metric: "connections_total", Labels: "port=443 protocol=tcp", Value: conns443},
			{Metric: "connections_total", Labels: "port=80 protocol=tcp", Value: conns80},
			{Metric: "packets_in_total", Labels: "port=443 protocol=tcp", Value: 5},
		}}}
}

// TestVIPRatesFromTwoSamples: the VIP's connections and bytes per second
// are the growth of the director's IPVS counters (every port) between two
// reads over the time between them; one sample gives no rate, a counter
// that went down (a restart) none, and the rejected configs count only
// when they grew.
func TestVIPRatesFromTwoSamples(t *testing.T) {
	src := &countingDirector{samples: []Component{
		directorSample(1000, 50, 1e6, 3),
		directorSample(1300, 150, 3e6, 3),
		directorSample(10, 0, 100, 4), // restarted
	}}
	col := &Collector{Components: src}

	first := BuildView(col.Collect(context.Background()))
	if first.VIPs[0].HasRate || len(first.Problems) != 0 {
		t.Fatalf("one sample: rate %v, problems %+v; want neither (3 rejected configs since start are history)", first.VIPs[0].HasRate, first.Problems)
	}

	s := col.Collect(context.Background())
	c := s.Components[0]
	if c.RateOver <= 0 {
		t.Fatalf("second sample: no rate window")
	}
	secs := c.RateOver.Seconds()
	r := BuildView(s).VIPs[0]
	if !r.HasRate || math.Abs(r.Rate.ConnsPerSec*secs-400) > 1e-6 || math.Abs(r.Rate.BytesPerSec*secs-2e6) > 1e-3 {
		t.Errorf("rate %+v over %v, want 400 connections and 2 MB over it", r.Rate, c.RateOver)
	}
	var b strings.Builder
	if err := WriteText(&b, BuildView(s)); err != nil {
		t.Fatal(err)
	}
	if want := "    traffic " + r.Rate.Conns() + " connections, " + r.Rate.Bytes() + " in\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}

	s = col.Collect(context.Background())
	if v := BuildView(s); v.VIPs[0].HasRate {
		t.Errorf("after a counter went down: rate %+v, want none", v.VIPs[0].Rate)
	}
	found := false
	for _, p := range BuildView(s).Problems {
		found = found || strings.HasPrefix(p.What, "1 configuration(s) rejected in the last ")
	}
	if !found {
		t.Errorf("a config rejected between two samples is no problem: %+v", BuildView(s).Problems)
	}
}

func TestPerSecond(t *testing.T) {
	for _, tc := range []struct {
		v     float64
		bytes bool
		want  string
	}{{12.5, false, "12.5/s"}, {3, false, "3/s"}, {0, true, "0 B/s"}, {3200, true, "3.2 kB/s"}, {12.34e6, true, "12.3 MB/s"}} {
		if got := perSecond(tc.v, tc.bytes); got != tc.want {
			t.Errorf("perSecond(%g, %t) = %q, want %q", tc.v, tc.bytes, got, tc.want)
		}
	}
}
