package dsl_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// TestWithoutKeysResolvesAsTheGateways (issue 22): the l7 beside the rate
// limit service reads no key, JWT secret or CA file (here they are gone),
// yet builds the same services, gateways and listeners as the gateways'
// l7 that read them, so the limits it serves are the gateways' routes'.
// Its certificates are the stand-in, never a real key.
func TestWithoutKeysResolvesAsTheGateways(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	if err := os.Mkdir(certs, 0o700); err != nil {
		t.Fatal(err)
	}
	writePair(t, certs, "shop", certNow.Add(-time.Hour), certNow.Add(time.Hour))
	writePair(t, certs, "ca", certNow.Add(-time.Hour), certNow.Add(time.Hour))
	writeFile(t, certs, "hmac.key", strings.Repeat("k", 48))
	writeFile(t, dir, "gw.yaml", `kind: gateway/gateway/v1
name: pub
listeners:
  - name: tls
    vip: 203.0.113.10
    port: 443
    protocol: HTTPS
    clientCertificate: {caFile: certs/ca.crt, required: false}
    certificates:
      - {name: shop, sni: [shop.example.com], certFile: certs/shop.crt, keyFile: certs/shop.key}
`)
	writeFile(t, dir, "shop.yaml", `kind: gateway/service/v1
name: shop
hosts: [shop.example.com]
listeners: [pub/tls]
jwt: {hmacSecretFile: certs/hmac.key}
upstreams:
  - {name: u, endpoints: ["198.51.100.1:443"], tls: {sni: u.internal, caFile: certs/ca.crt}}
routes:
  - {prefix: /cart, target: u, auth: {required: false}, rateLimit: {global: {perRoute: {requests: 5, unit: minute}}}}
`)
	now := func() time.Time { return certNow }
	full, errs, err := dsl.NewDir(dir, now).Load()
	if err != nil || len(errs) > 0 {
		t.Fatalf("load with keys: %v %v", err, errs)
	}
	realKey, _ := os.ReadFile(filepath.Join(certs, "shop.key"))
	if err := os.RemoveAll(certs); err != nil {
		t.Fatal(err)
	}
	standIn, err := tlscert.NewStandIn(certNow)
	if err != nil {
		t.Fatal(err)
	}
	keyless, errs, err := dsl.NewDir(dir, now).WithoutKeys(standIn).Load()
	if err != nil || len(errs) > 0 {
		t.Fatalf("load without keys: %v %v", err, errs)
	}
	opts := model.Options{RateLimitService: &model.RateLimitService{Host: "ratelimit", Port: 8081}}
	a, b := model.Resolve(full, opts), model.Resolve(keyless, opts)
	if len(a.Problems) > 0 || len(b.Problems) > 0 {
		t.Fatalf("problems: with keys %v, without %v", a.Problems, b.Problems)
	}
	summary := func(r model.Resolved) string {
		var out []string
		for _, l := range r.Listeners {
			out = append(out, l.Name+"="+strings.Join(l.Services, "+"))
		}
		for _, s := range r.Config.Services {
			for i := range s.Routes {
				out = append(out, model.RouteID(s.Name, i, s.Routes[i]))
			}
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	if summary(a) != summary(b) || summary(a) == "" {
		t.Fatalf("resolved differently:\nwith keys    %s\nwithout keys %s", summary(a), summary(b))
	}
	for _, c := range keyless.Certificates {
		if c.Key.Equal(model.NewPrivateKey(realKey)) || string(c.Chain) != string(standIn.Chain) {
			t.Fatalf("certificate %s is not the stand-in", c.Name)
		}
	}
}
