// Package certexpiry is the pipeline consumer that reports the days left
// on each certificate published (tlb_l7_certificate_expiry_days), for the
// alert that fires before a gateway serves an expired one. It reads the
// merged configuration's certificates and nothing else.
package certexpiry

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// Gauge is the gauge tlb_l7_certificate_expiry_days
// {certificate}: days left until the end of validity of each certificate
// last published, computed at scrape time against the clock given. Label
// values are the model's certificate names only, so the series are the
// certificates served and go when they do.
type Gauge struct {
	now  func() time.Time
	desc *prometheus.Desc

	mu       sync.Mutex
	notAfter map[string]time.Time
}

// New returns the gauge, registered with reg (nil: none).
func New(reg prometheus.Registerer, now func() time.Time) *Gauge {
	e := &Gauge{now: now, notAfter: map[string]time.Time{},
		desc: prometheus.NewDesc("tlb_l7_certificate_expiry_days",
			"Days until the certificate served under this name expires (negative once expired).", []string{"certificate"}, nil)}
	if reg != nil {
		reg.MustRegister(e)
	}
	return e
}

// Set replaces the certificates reported by those of certs.
func (e *Gauge) Set(certs []model.Certificate) {
	m := make(map[string]time.Time, len(certs))
	for _, c := range certs {
		if leaf, err := tlscert.Leaf(c.Chain); err == nil {
			m[c.Name] = leaf.NotAfter
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.notAfter = m
}

// Describe implements prometheus.Collector.
func (e *Gauge) Describe(ch chan<- *prometheus.Desc) { ch <- e.desc }

// Collect implements prometheus.Collector.
func (e *Gauge) Collect(ch chan<- prometheus.Metric) {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for name, na := range e.notAfter {
		ch <- prometheus.MustNewConstMetric(e.desc, prometheus.GaugeValue, na.Sub(now).Hours()/24, name)
	}
}

// Consume implements pipeline.Consumer: the certificates reported are
// those of the change.
func (e *Gauge) Consume(_ context.Context, c pipeline.Change, _ *pipeline.Report) {
	e.Set(c.Config.Certificates)
}
