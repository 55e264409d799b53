package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/internal/console"
	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/routetable"
	"github.com/tlbproject/tlb/tlb/health"
)

// director serves what a director's obs listener serves: the real obs
// handler (/readyz, /metrics) and the real GTM handler on /vip/, with
// gauges under the names the director, bgp and health packages export.
func director(t *testing.T, ready bool, perVIP bool) string {
	t.Helper()
	srv := obs.NewServer("", slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv.SetReady(ready, "no BGP session established")
	sess := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tlb_bgp_session_established", Help: "h"}, []string{"peer"})
	sess.WithLabelValues("198.18.1.1").Set(1)
	sess.WithLabelValues("198.18.1.254").Set(0)
	rs := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tlb_health_real_server_up", Help: "h"}, []string{"real_server"})
	rs.WithLabelValues("198.18.2.3").Set(0)
	rs.WithLabelValues("198.18.2.2").Set(1)
	rejected := prometheus.NewCounter(prometheus.CounterOpts{Name: "tlb_director_config_rejected_total", Help: "h"})
	rejected.Add(2)
	srv.Registry.MustRegister(sess, rs, rejected)
	if perVIP {
		conns := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tlb_director_vip_connections_total", Help: "h"}, []string{"vip", "port", "protocol"})
		conns.WithLabelValues("203.0.113.10", "80", "tcp").Add(42)
		srv.Registry.MustRegister(conns)
	}
	gtm := health.NewGTM()
	gtm.SetHealth([]health.VIPHealth{
		{VIP: netip.MustParseAddr("203.0.113.10"), Healthy: 1, Total: 2},
		{VIP: netip.MustParseAddr("203.0.113.11"), Healthy: 0, Total: 2},
	})
	mux := srv.Handler()
	mux.Handle("/vip/", gtm)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestHTTPComponentsReadADirector(t *testing.T) {
	url := director(t, true, true)
	got := console.HTTPComponents{Endpoints: []console.Endpoint{{Role: console.RoleDirector, Name: "dir-1", URL: url}}}.ReadComponents(context.Background())
	if len(got) != 1 {
		t.Fatalf("got %d components", len(got))
	}
	c := got[0]
	if c.Err != "" || !c.Ready {
		t.Fatalf("err %q ready %v", c.Err, c.Ready)
	}
	if want := []console.BGPSession{{Peer: "198.18.1.1", Established: true}, {Peer: "198.18.1.254", Established: false}}; !reflect.DeepEqual(c.Sessions, want) {
		t.Errorf("sessions %v, want %v", c.Sessions, want)
	}
	if want := []console.RealServer{{Address: "198.18.2.2", Up: true}, {Address: "198.18.2.3", Up: false}}; !reflect.DeepEqual(c.RealServers, want) {
		t.Errorf("real servers %v, want %v", c.RealServers, want)
	}
	if c.Rejected != 2 {
		t.Errorf("rejected %g, want 2", c.Rejected)
	}
	if a := c.GTM["203.0.113.10"]; !a.Up || a.Line != "203.0.113.10 up healthy=1 total=2" {
		t.Errorf("GTM .10 = %+v", a)
	}
	if a := c.GTM["203.0.113.11"]; a.Up || !strings.Contains(a.Line, "no healthy gateway") {
		t.Errorf("GTM .11 = %+v", a)
	}
	if want := []console.Sample{{Metric: "connections_total", Labels: "port=80 protocol=tcp", Value: 42}}; !reflect.DeepEqual(c.Traffic["203.0.113.10"], want) {
		t.Errorf("traffic %v, want %v", c.Traffic, want)
	}
}

func TestHTTPComponentsDegrade(t *testing.T) {
	noTraffic := director(t, false, false)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there any more
	got := console.HTTPComponents{Endpoints: []console.Endpoint{
		{Role: console.RoleDirector, Name: "old", URL: noTraffic},
		{Role: console.RoleDirector, Name: "gone", URL: down.URL},
	}}.ReadComponents(context.Background())
	if got[0].Err != "" || got[0].Ready || got[0].ReadyReason != "not ready: no BGP session established" {
		t.Errorf("old: %+v", got[0])
	}
	if len(got[0].Traffic) != 0 || len(got[0].GTM) != 2 {
		t.Errorf("old: traffic %v GTM %v: want no traffic, the GTM answer still read", got[0].Traffic, got[0].GTM)
	}
	if !strings.Contains(got[1].Err, "/readyz") {
		t.Errorf("gone: err %q, want one naming the endpoint", got[1].Err)
	}
}

// TestHTTPComponentsReadL7Routes: the console reads the routes of a real
// l7 route table (l7/routetable's GET /routes) from an l7 endpoint.
func TestHTTPComponentsReadL7Routes(t *testing.T) {
	table := routetable.New("edge")
	table.Set(model.Config{
		Gateways: []model.Gateway{{Name: "edge", Listeners: []model.Listener{{Name: "https", VIP: netip.MustParseAddr("203.0.113.10"), Port: 443, Protocol: model.HTTPS}}}},
		Services: []model.Service{{Name: "shop", Origin: "shop.tlb", Hosts: []string{"shop.example.com"},
			Listeners: []model.ListenerRef{{Gateway: "edge", Listener: "https"}},
			Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "web", Weight: 1}}}},
			Upstreams: []model.Upstream{{Name: "web", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("10.0.0.1:8080")}}}}}},
	}, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ready\n")) })
	mux.HandleFunc("/metrics", func(http.ResponseWriter, *http.Request) {})
	mux.Handle("/routes", table)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	got := console.HTTPComponents{Endpoints: []console.Endpoint{{Role: console.RoleL7, Name: "edge-a", URL: hs.URL}}}.ReadComponents(context.Background())
	if len(got) != 1 || got[0].Err != "" {
		t.Fatalf("components %+v", got)
	}
	want := []api.RouteRow{{Gateway: "edge", Listener: "https", VIP: "203.0.113.10", Port: 443, Protocol: "HTTPS", Host: "shop.example.com",
		Match: "prefix", Path: "/", Service: "shop", Origin: "shop.tlb", Source: "dsl",
		Upstreams: []api.RouteUpstream{{Name: "web", Weight: 1, Endpoints: []string{"10.0.0.1:8080"}}}}}
	if !reflect.DeepEqual(got[0].Routes, want) {
		t.Errorf("routes\n got %+v\nwant %+v", got[0].Routes, want)
	}

	// An l7 without /routes (404) is read as before; a broken body is an error.
	mux2 := http.NewServeMux()
	mux2.HandleFunc("/readyz", func(http.ResponseWriter, *http.Request) {})
	mux2.HandleFunc("/metrics", func(http.ResponseWriter, *http.Request) {})
	old := httptest.NewServer(mux2)
	t.Cleanup(old.Close)
	mux2.HandleFunc("/broken/routes", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{")) })
	mux2.HandleFunc("/broken/readyz", func(http.ResponseWriter, *http.Request) {})
	mux2.HandleFunc("/broken/metrics", func(http.ResponseWriter, *http.Request) {})
	got = console.HTTPComponents{Endpoints: []console.Endpoint{{Role: console.RoleL7, Name: "old", URL: old.URL}, {Role: console.RoleL7, Name: "broken", URL: old.URL + "/broken"}}}.ReadComponents(context.Background())
	if got[0].Err != "" || got[0].Routes != nil {
		t.Errorf("l7 without /routes: %+v", got[0])
	}
	if !strings.Contains(got[1].Err, "GET /routes: parse routes") {
		t.Errorf("l7 with a broken /routes: err %q", got[1].Err)
	}
}
