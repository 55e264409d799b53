package serve

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/tlscert"
	"github.com/tlbproject/tlb/l7/xds"
)

// CertificateExpiry is the gauge tlb_l7_certificate_expiry_days
// {certificate}: days left until the end of validity of each certificate
// last published, computed at scrape time against the clock given. Label
// values are the model's certificate names only, so the series are the
// certificates served and go when they do.
type CertificateExpiry struct {
	now  func() time.Time
	desc *prometheus.Desc

	mu       sync.Mutex
	notAfter map[string]time.Time
}

// NewCertificateExpiry returns the gauge, registered with reg (nil: none).
func NewCertificateExpiry(reg prometheus.Registerer, now func() time.Time) *CertificateExpiry {
	e := &CertificateExpiry{now: now, notAfter: map[string]time.Time{},
		desc: prometheus.NewDesc("tlb_l7_certificate_expiry_days",
			"Days until the certificate served under this name expires (negative once expired).", []string{"certificate"}, nil)}
	if reg != nil {
		reg.MustRegister(e)
	}
	return e
}

// Set replaces the certificates reported by those of certs.
func (e *CertificateExpiry) Set(certs []model.Certificate) {
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
func (e *CertificateExpiry) Describe(ch chan<- *prometheus.Desc) { ch <- e.desc }

// Collect implements prometheus.Collector.
func (e *CertificateExpiry) Collect(ch chan<- prometheus.Metric) {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	for name, na := range e.notAfter {
		ch <- prometheus.MustNewConstMetric(e.desc, prometheus.GaugeValue, na.Sub(now).Hours()/24, name)
	}
}

// Publishing returns a Publisher that publishes to p and then reports the
// certificates of what it published.
func (e *CertificateExpiry) Publishing(p Publisher) Publisher { return expiryPublisher{p, e} }

type expiryPublisher struct {
	inner Publisher
	e     *CertificateExpiry
}

func (p expiryPublisher) Publish(ctx context.Context, cfg model.Config) xds.Report {
	rep := p.inner.Publish(ctx, cfg)
	p.e.Set(cfg.Certificates)
	return rep
}
