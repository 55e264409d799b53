package monitoring

import (
	"context"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/l7/certexpiry"
	"github.com/tlbproject/tlb/l7/xds"
	netdagent "github.com/tlbproject/tlb/netd/agent"
	"github.com/tlbproject/tlb/tlb/director"
)

// describing is a Registerer that keeps the name of every metric its
// collectors describe.
type describing struct{ names map[string]bool }

var reFQName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (d describing) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		if m := reFQName.FindStringSubmatch(desc.String()); m != nil {
			d.names[m[1]] = true
		}
	}
	return nil
}

func (d describing) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = d.Register(c)
	}
}

func (describing) Unregister(prometheus.Collector) bool { return true }

// TestSourceScanAgreesWithDescribe: the metric names the source scan finds
// include every name the collectors of item 1 (and their neighbours)
// describe when built for real, so the scan the dashboards are checked
// against does not miss a way of declaring a metric.
func TestSourceScanAgreesWithDescribe(t *testing.T) {
	reg := describing{names: map[string]bool{}}
	log := slog.New(slog.DiscardHandler)
	if _, err := director.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(director.NewTrafficCollector(nil, nil))
	netdagent.NewMetrics(reg)
	certexpiry.New(reg, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	xds.New(ctx, log, reg, time.Now, xds.Options{Group: "edge"})
	if _, err := bgp.NewSpeaker(bgp.Config{LocalASN: 64512, RouterID: "192.0.2.1", AllowedPrefixes: []string{"203.0.113.0/24"},
		Peers: []bgp.PeerConfig{{Address: "192.0.2.254", ASN: 64513}}}, log, reg); err != nil {
		t.Fatal(err)
	}

	scanned := registeredNames(t)
	for _, want := range []string{"tlb_director_vip_connections_total", "tlb_bgp_session_state",
		"netd_vip_bound", "tlb_l7_xds_stream_in_sync", "tlb_l7_certificate_expiry_days"} {
		if !reg.names[want] {
			t.Errorf("%s not described by its collector", want)
		}
	}
	for name := range reg.names {
		_, ok := scanned[name]
		if _, histogram := scanned[name+"_bucket"]; !ok && !histogram {
			t.Errorf("%s is described by a collector but the source scan missed it", name)
		}
	}
	t.Logf("%d described names checked against the scan", len(reg.names))
}
