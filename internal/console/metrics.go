package console

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The metrics the console reads; a component that lacks one simply shows
// nothing for it.
const (
	metricSession        = "tlb_bgp_session_established"
	metricAnnounced      = "tlb_bgp_announced_prefixes"
	metricBFDState       = "tlb_bfd_session_state"
	metricRealServerUp   = "tlb_health_real_server_up"
	metricDirRejected    = "tlb_director_config_rejected_total"
	metricNetdRejected   = "netd_config_errors_total"
	metricNetdBound      = "netd_vips_bound"
	metricCertExpiry     = "tlb_l7_certificate_expiry_days"
	metricNACKs          = "tlb_l7_xds_nacks_total"
	metricConfigProblems = "tlb_l7_config_problems"
	metricL7Rejected     = "tlb_l7_snapshot_rejected_total"
	// prefixVIP starts the director's per-VIP series; each carries a vip
	// label. Another part of the project adds IPVS's counters there.
	prefixVIP = "tlb_director_vip_"
	// prefixNetdVIP starts netd's per-VIP series (bound or not).
	prefixNetdVIP = "netd_vip_"
)

// applyMetrics parses a Prometheus text exposition into c.
func applyMetrics(c *Component, r io.Reader) error {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return fmt.Errorf("parse metrics: %w", err)
	}
	for _, m := range fams[metricSession].GetMetric() {
		c.Sessions = append(c.Sessions, BGPSession{Peer: label(m, "peer"), Established: value(m) == 1})
	}
	slices.SortFunc(c.Sessions, func(a, b BGPSession) int { return cmp.Compare(a.Peer, b.Peer) })
	applyBFD(c, fams[metricBFDState])
	c.Announced = sum(fams[metricAnnounced])
	for _, m := range fams[metricRealServerUp].GetMetric() {
		c.RealServers = append(c.RealServers, RealServer{Address: label(m, "real_server"), Up: value(m) == 1})
	}
	slices.SortFunc(c.RealServers, func(a, b RealServer) int { return cmp.Compare(a.Address, b.Address) })
	c.Rejected = sum(fams[metricDirRejected]) + sum(fams[metricNetdRejected]) + sum(fams[metricL7Rejected])
	if f, ok := fams[metricNetdBound]; ok {
		c.VIPsBound = sum(f)
	}
	for _, m := range fams[metricCertExpiry].GetMetric() {
		c.Certificates = append(c.Certificates, Certificate{Name: label(m, "certificate"), DaysLeft: value(m)})
	}
	slices.SortFunc(c.Certificates, func(a, b Certificate) int { return cmp.Compare(a.Name, b.Name) })
	for _, m := range fams[metricNACKs].GetMetric() {
		if v := value(m); v > 0 {
			c.NACKs = append(c.NACKs, Sample{Metric: metricNACKs, Labels: labels(m, ""), Value: v})
		}
	}
	c.ConfigProblems = sum(fams[metricConfigProblems])
	applyStreams(c, fams)
	applyEnvoy(c, fams)
	names := make([]string, 0, len(fams))
	for name := range fams {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		switch {
		case strings.HasPrefix(name, prefixVIP):
			for _, m := range fams[name].GetMetric() {
				vip := label(m, "vip")
				if vip == "" {
					continue
				}
				if c.Traffic == nil {
					c.Traffic = map[string][]Sample{}
				}
				c.Traffic[vip] = append(c.Traffic[vip], Sample{Metric: strings.TrimPrefix(name, prefixVIP), Labels: labels(m, "vip"), Value: value(m)})
			}
		case strings.HasPrefix(name, prefixNetdVIP):
			for _, m := range fams[name].GetMetric() {
				if vip := label(m, "vip"); vip != "" && value(m) == 1 && !slices.Contains(c.Bound, vip) {
					c.Bound = append(c.Bound, vip)
				}
			}
		}
	}
	slices.Sort(c.Bound)
	return nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// labels renders m's labels but skip as name=value pairs.
func labels(m *dto.Metric, skip string) string {
	var parts []string
	for _, l := range m.GetLabel() {
		if l.GetName() != skip {
			parts = append(parts, l.GetName()+"="+l.GetValue())
		}
	}
	return strings.Join(parts, " ")
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// sum sums the series of f (0 when f is absent).
func sum(f *dto.MetricFamily) float64 {
	var v float64
	for _, m := range f.GetMetric() {
		v += value(m)
	}
	return v
}

// applyBFD sets each BGP session's BFD state from the state series that
// is 1 for the peer.
func applyBFD(c *Component, f *dto.MetricFamily) {
	for _, m := range f.GetMetric() {
		if value(m) != 1 {
			continue
		}
		for i := range c.Sessions {
			if c.Sessions[i].Peer == label(m, "peer") {
				c.Sessions[i].BFD = label(m, "state")
			}
		}
	}
}
