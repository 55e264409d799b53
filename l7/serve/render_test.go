package serve_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/serve"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestRenderNeverPrintsKeys renders every group in both formats and looks
// for the example key's bytes.
func TestRenderNeverPrintsKeys(t *testing.T) {
	for _, format := range []string{serve.FormatXDS, serve.FormatBootstrap} {
		out, errs, err := serve.Render(dsl.NewDir("../testdata/config", time.Now), "edge", translate.Gateway, format, model.Options{})
		if err != nil || len(errs) > 0 {
			t.Fatalf("%s: %v %v", format, err, errs)
		}
		s := string(out)
		if !strings.Contains(s, "public.shop") || !strings.Contains(s, "certificate_chain") {
			t.Fatalf("%s: the secret is not rendered at all; the test would prove nothing:\n%s", format, s)
		}
		for _, l := range keyForms(t) {
			if strings.Contains(s, l) {
				t.Fatalf("%s: render output contains key material", format)
			}
		}
		if !strings.Contains(s, "203.0.113.10:443/HTTPS https-203.0.113.10-443 services [shop]") {
			t.Errorf("%s: no listener line for 203.0.113.10:443/HTTPS", format)
		}
		want := map[string]string{serve.FormatXDS: "[REDACTED]", serve.FormatBootstrap: "/etc/envoy/certs/public.shop/tls.key"}[format]
		if !strings.Contains(s, want) {
			t.Errorf("%s: output lacks %q", format, want)
		}
	}
}

func TestRenderUnknownGroup(t *testing.T) {
	_, _, err := serve.Render(dsl.NewDir("../testdata/config", time.Now), "nope", translate.Gateway, serve.FormatXDS, model.Options{})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "edge") {
		t.Fatalf("want an error naming the group and the known ones, got %v", err)
	}
}
