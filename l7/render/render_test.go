package render_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/render"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestRenderNeverPrintsKeys renders every group in both formats and looks
// for the example key's bytes.
func TestRenderNeverPrintsKeys(t *testing.T) {
	for _, format := range []string{render.FormatXDS, render.FormatBootstrap} {
		out, errs, err := render.Render(dsl.NewDir("../testdata/config", time.Now), "edge", translate.Gateway, format, model.Options{})
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
		want := map[string]string{render.FormatXDS: "[REDACTED]", render.FormatBootstrap: "/etc/envoy/certs/public.shop/tls.key"}[format]
		if !strings.Contains(s, want) {
			t.Errorf("%s: output lacks %q", format, want)
		}
	}
}

func TestRenderUnknownGroup(t *testing.T) {
	_, _, err := render.Render(dsl.NewDir("../testdata/config", time.Now), "nope", translate.Gateway, render.FormatXDS, model.Options{})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "edge") {
		t.Fatalf("want an error naming the group and the known ones, got %v", err)
	}
}

// TestRenderRateLimit: l7 render --format ratelimit prints the file form
// of the configuration l7 serves over xDS: the same tree.
func TestRenderRateLimit(t *testing.T) {
	dir := t.TempDir()
	gw := "kind: gateway/gateway/v1\nname: gw\ngroup: edge\nlisteners: [{name: web, vip: 203.0.113.1, port: 80, protocol: HTTP}]\n"
	for name, src := range map[string]string{"gw.yaml": gw, "shop.yaml": limitedShop} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := model.Options{RateLimitService: &model.RateLimitService{Host: "ratelimit", Port: 8081}}
	out, errs, err := render.Render(dsl.NewDir(dir, time.Now), "edge", translate.Gateway, render.FormatRateLimit, opts)
	if err != nil || len(errs) > 0 {
		t.Fatalf("render: %v %v", err, errs)
	}
	var got ratelimit.ServiceConfig
	if err := yaml.UnmarshalStrict(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cfg, fileErrs, err := dsl.NewDir(dir, time.Now).Load()
	if err != nil || len(fileErrs) > 0 {
		t.Fatal(err, fileErrs)
	}
	want, err := model.GroupRateLimits(model.Resolve(cfg, opts), "edge")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(want.Descriptors) != 2 {
		t.Errorf("rendered %+v\nwant %+v", got, want)
	}
}

const limitedShop = `kind: gateway/service/v1
name: shop
group: edge
hosts: [shop.example.com]
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
rateLimit: {global: {perRoute: {requests: 50, unit: second}}}
routes:
  - {name: cart, prefix: /cart, target: u, rateLimit: {global: {perClientIP: {requests: 3, unit: hour}}}}
  - {name: local, prefix: /local, target: u, rateLimit: {local: {requestsPerSecond: 1, burst: 1}}}
  - {prefix: /, target: u}
`

// keyLines returns the base64 lines of the example key: the secret part.
func keyLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../testdata/config/certs/shop.key")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatal("example key has no body")
	}
	return out
}

// keyForms is the key's body lines plus the whole key in base64, as it
// would appear in a JSON or YAML rendering of bytes.
func keyForms(t *testing.T) []string {
	b, err := os.ReadFile("../testdata/config/certs/shop.key")
	if err != nil {
		t.Fatal(err)
	}
	return append(keyLines(t), base64.StdEncoding.EncodeToString(b)[:40])
}
