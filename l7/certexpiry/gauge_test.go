package certexpiry_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/l7/certexpiry"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// publish hands cfg to the gauge as the pipeline does.
func publish(e *certexpiry.Gauge, cfg model.Config) {
	e.Consume(context.Background(), pipeline.Change{Config: cfg}, &pipeline.Report{})
}

// TestCertificateExpiryGauge: every certificate published has a series
// with its days left at scrape time, named after the model's certificate;
// a certificate no longer published loses its series.
func TestCertificateExpiryGauge(t *testing.T) {
	chain, err := os.ReadFile("../testdata/config/certs/shop.crt")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := tlscert.Leaf(chain)
	if err != nil {
		t.Fatal(err)
	}
	now := leaf.NotAfter.Add(-10 * 24 * time.Hour)
	reg := prometheus.NewPedanticRegistry()
	e := certexpiry.New(reg, func() time.Time { return now })
	publish(e, model.Config{Certificates: []model.Certificate{{Name: "public.shop", Chain: chain}}})
	if got := expiryDays(t, reg); len(got) != 1 || got["public.shop"] != 10 {
		t.Fatalf("days left %v; want public.shop 10", got)
	}
	now = now.Add(36 * time.Hour)
	if got := expiryDays(t, reg); len(got) != 1 || got["public.shop"] != 8.5 {
		t.Fatalf("days left %v; want public.shop 8.5", got)
	}
	publish(e, model.Config{})
	if got := expiryDays(t, reg); len(got) != 0 {
		t.Fatalf("series %v after the certificate went; want none", got)
	}
	// The example directory's certificate, loaded as l7 serve does.
	cfg, errs, err := dsl.NewDir("../testdata/config", func() time.Time { return leaf.NotBefore }).Load()
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	publish(e, cfg)
	if got := expiryDays(t, reg); len(got) != len(cfg.Certificates) || len(got) == 0 {
		t.Fatalf("series %v for %d certificates", got, len(cfg.Certificates))
	}
}

// expiryDays gathers tlb_l7_certificate_expiry_days by certificate.
func expiryDays(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "tlb_l7_certificate_expiry_days" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetName() != "certificate" {
				t.Fatalf("labels %v; want certificate only", m.GetLabel())
			}
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}
