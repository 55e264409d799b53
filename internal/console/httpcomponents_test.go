package console

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tlbproject/tlb/internal/obs"
)

// director serves what a director's obs listener serves, less the GTM
// handler (integration/console proves the console reads the real one):
// the real obs handler (/readyz, /metrics) with gauges under the names
// the director, bgp and health packages export.
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
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
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
