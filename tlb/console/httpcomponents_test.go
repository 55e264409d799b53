package console

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

	"github.com/tlbproject/tlb/internal/obs"
	"github.com/tlbproject/tlb/tlb/health"
)

// director serves what a director's obs listener serves: the real obs
// handler (/readyz, /metrics) and the real GTM handler on /vip/, with
// gauges under the names the director, bgp and health packages export.
func director(t *testing.T, ready bool, perVIP bool) string {
	t.Helper()
	srv := obs.NewServer("", slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv.SetReady(ready, "no BGP session established")
	sess := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricSession, Help: "h"}, []string{"peer"})
	sess.WithLabelValues("198.18.1.1").Set(1)
	sess.WithLabelValues("198.18.1.254").Set(0)
	rs := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricRealServerUp, Help: "h"}, []string{"real_server"})
	rs.WithLabelValues("198.18.2.3").Set(0)
	rs.WithLabelValues("198.18.2.2").Set(1)
	rejected := prometheus.NewCounter(prometheus.CounterOpts{Name: metricDirRejected, Help: "h"})
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
	got := HTTPComponents{Endpoints: []Endpoint{{Role: RoleDirector, Name: "dir-1", URL: url}}}.ReadComponents(context.Background())
	if len(got) != 1 {
		t.Fatalf("got %d components", len(got))
	}
	c := got[0]
	if c.Err != "" || !c.Ready {
		t.Fatalf("err %q ready %v", c.Err, c.Ready)
	}
	if want := []BGPSession{{"198.18.1.1", true}, {"198.18.1.254", false}}; !reflect.DeepEqual(c.Sessions, want) {
		t.Errorf("sessions %v, want %v", c.Sessions, want)
	}
	if want := []RealServer{{"198.18.2.2", true}, {"198.18.2.3", false}}; !reflect.DeepEqual(c.RealServers, want) {
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
	if want := []Sample{{Metric: "connections_total", Labels: "port=80 protocol=tcp", Value: 42}}; !reflect.DeepEqual(c.Traffic["203.0.113.10"], want) {
		t.Errorf("traffic %v, want %v", c.Traffic, want)
	}
}

func TestHTTPComponentsDegrade(t *testing.T) {
	noTraffic := director(t, false, false)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there any more
	got := HTTPComponents{Endpoints: []Endpoint{
		{Role: RoleDirector, Name: "old", URL: noTraffic},
		{Role: RoleDirector, Name: "gone", URL: down.URL},
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

func TestApplyMetricsNetdAndL7(t *testing.T) {
	text := `# TYPE netd_vips_bound gauge
netd_vips_bound 2
# TYPE netd_vip_bound gauge
netd_vip_bound{vip="203.0.113.11"} 1
netd_vip_bound{vip="203.0.113.10"} 1
netd_vip_bound{vip="203.0.113.12"} 0
# TYPE tlb_l7_certificate_expiry_days gauge
tlb_l7_certificate_expiry_days{certificate="shop.web.tls"} 12.5
# TYPE tlb_l7_xds_nacks_total counter
tlb_l7_xds_nacks_total{group="edge",type="cluster"} 0
tlb_l7_xds_nacks_total{group="edge",type="listener"} 3
# TYPE tlb_l7_config_problems gauge
tlb_l7_config_problems 1
`
	var c Component
	if err := applyMetrics(&c, strings.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	if c.VIPsBound != 2 || !reflect.DeepEqual(c.Bound, []string{"203.0.113.10", "203.0.113.11"}) {
		t.Errorf("bound %g %v", c.VIPsBound, c.Bound)
	}
	if !reflect.DeepEqual(c.Certificates, []Certificate{{"shop.web.tls", 12.5}}) {
		t.Errorf("certificates %v", c.Certificates)
	}
	if len(c.NACKs) != 1 || c.NACKs[0].Labels != "group=edge type=listener" || c.NACKs[0].Value != 3 {
		t.Errorf("NACKs %v, want only the non-zero series", c.NACKs)
	}
	if c.ConfigProblems != 1 {
		t.Errorf("config problems %g", c.ConfigProblems)
	}
	if err := applyMetrics(&Component{}, strings.NewReader("not metrics {{{\n")); err == nil {
		t.Error("garbage parsed without an error")
	}
}
