package translate_test

import (
	"net/netip"
	"regexp"
	"slices"
	"testing"
	"time"

	cors "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// TestRetryCodesAndBackoff: a retry's status codes and backoff reach
// Envoy's retry policy (retriable_status_codes, the back-off's base).
func TestRetryCodesAndBackoff(t *testing.T) {
	target := []model.WeightedTarget{{Upstream: "u", Weight: 1}}
	svc := model.Service{Name: "svc", Group: "g", Hosts: []string{"svc.example"},
		Upstreams: []model.Upstream{{Name: "u", Endpoints: []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.1:80"), Weight: 1}}}},
		Routes: []model.Route{{Name: "r", Prefix: "/", Targets: target,
			Retries: &model.RetryPolicy{Attempts: 3, On: "reset,retriable-status-codes", Codes: []uint32{500, 503}, Backoff: 100 * time.Millisecond}}}}
	r := resolve(t, model.Config{Services: []model.Service{svc}}, model.Options{})
	var found bool
	for _, rc := range translate.GroupRoutes(r, "g") {
		for _, vh := range rc.GetVirtualHosts() {
			for _, rt := range vh.GetRoutes() {
				if err := validate.Message(rt); err != nil {
					t.Fatal(err)
				}
				found = true
				rp := rt.GetRoute().GetRetryPolicy()
				if rp.GetNumRetries().GetValue() != 3 || rp.GetRetryOn() != "reset,retriable-status-codes" || !slices.Equal(rp.GetRetriableStatusCodes(), []uint32{500, 503}) ||
					rp.GetRetryBackOff().GetBaseInterval().AsDuration() != 100*time.Millisecond {
					t.Errorf("retry policy %v; want 3 retries on 500 and 503, back-off from 100ms", rp)
				}
			}
		}
	}
	if !found {
		t.Fatal("no route translated")
	}
}

const corsWildcard = `kind: gateway/service/v1
name: app
group: g
hosts: [app.example.com]
listeners: [gw/guarded]
cors: {allowOrigins: ["https://*.bar.com"], allowCredentials: true}
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes: [{name: api, prefix: /api, target: u}]
`

// TestCORSWildcardOrigin: an origin with a wildcard host becomes a regex
// that allows one or more labels in front of the host and nothing else.
func TestCORSWildcardOrigin(t *testing.T) {
	_, rcs := gatewaySet(t, resolveDocs(t, filtersGateway, corsWildcard))
	p := perRoute[cors.CorsPolicy](t, routesByName(rcs["http-203.0.113.1-80"])["app/api"], translate.CORSFilter)
	if len(p.GetAllowOriginStringMatch()) != 1 {
		t.Fatalf("policy %v; want one origin", p)
	}
	re := p.GetAllowOriginStringMatch()[0].GetSafeRegex().GetRegex()
	for origin, want := range map[string]bool{"https://a.bar.com": true, "https://x.www.bar.com": true, "https://bar.com": false,
		"http://a.bar.com": false, "https://a.bar.com.evil.com": false, "https://a.barxcom": false} {
		if got := fullMatch(t, re, origin); got != want {
			t.Errorf("origin %s matches %q: %v, want %v", origin, re, got, want)
		}
	}
}

// fullMatch reports whether the RE2 pattern matches all of s, as Envoy's
// safe_regex does.
func fullMatch(t *testing.T, pattern, s string) bool {
	t.Helper()
	return regexp.MustCompile(`^(?:` + pattern + `)$`).MatchString(s)
}
