package console

import (
	"strconv"
	"strings"
	"time"
)

// VIPRate is a director's traffic to one VIP (every port) per second,
// from IPVS's counters (tlb_director_vip_connections_total and
// tlb_director_vip_bytes_in_total) at two samples.
type VIPRate struct {
	ConnsPerSec float64
	BytesPerSec float64
}

// addRates sets c's rates from the counters of prev, read over before c:
// per-VIP traffic, rejected configs and NACKs. A counter that went down
// (the component restarted, a 32-bit counter wrapped) gives no rate.
func addRates(c *Component, prev Component, over time.Duration) {
	if over <= 0 {
		return
	}
	c.RateOver = over
	secs := over.Seconds()
	for vip, samples := range c.Traffic {
		var r VIPRate
		known := false
		for _, s := range samples {
			d, ok := delta(s, prev.Traffic[vip])
			if !ok {
				continue
			}
			switch s.Metric {
			case "connections_total":
				r.ConnsPerSec += d / secs
				known = true
			case "bytes_in_total":
				r.BytesPerSec += d / secs
				known = true
			}
		}
		if known {
			if c.VIPRates == nil {
				c.VIPRates = map[string]VIPRate{}
			}
			c.VIPRates[vip] = r
		}
	}
	if d := c.Rejected - prev.Rejected; d > 0 {
		c.RejectedRecent = d
	}
	for _, n := range c.NACKs {
		if d, ok := delta(n, prev.NACKs); ok && d > 0 {
			c.NACKsRecent = append(c.NACKsRecent, Sample{Metric: n.Metric, Labels: n.Labels, Value: d})
		} else if !ok && !hasSeries(prev.NACKs, n) {
			// A series that appeared since the last sample counted
			// from zero.
			c.NACKsRecent = append(c.NACKsRecent, n)
		}
	}
}

// delta is s's growth since the same series in prev; false when prev
// lacks it or it went down.
func delta(s Sample, prev []Sample) (float64, bool) {
	for _, p := range prev {
		if p.Metric == s.Metric && p.Labels == s.Labels {
			if s.Value < p.Value {
				return 0, false
			}
			return s.Value - p.Value, true
		}
	}
	return 0, false
}

func hasSeries(samples []Sample, s Sample) bool {
	for _, p := range samples {
		if p.Metric == s.Metric && p.Labels == s.Labels {
			return true
		}
	}
	return false
}

// perSecond renders a rate: "12.5/s", "3.2 kB/s".
func perSecond(v float64, bytes bool) string {
	if !bytes {
		return trimFloat(v) + "/s"
	}
	units := []string{"B", "kB", "MB", "GB"}
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	return trimFloat(v) + " " + units[i] + "/s"
}

// trimFloat renders v with one decimal, without a trailing ".0".
func trimFloat(v float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0")
}

// Conns renders the connection rate.
func (r VIPRate) Conns() string { return perSecond(r.ConnsPerSec, false) }

// Bytes renders the byte rate.
func (r VIPRate) Bytes() string { return perSecond(r.BytesPerSec, true) }
