package bgp

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// value reads the current value of a gauge or counter.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatalf("read metric: %v", err)
	}
	if d.Gauge != nil {
		return d.Gauge.GetValue()
	}
	return d.Counter.GetValue()
}
