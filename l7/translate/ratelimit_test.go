package translate_test

import (
	"slices"
	"strings"
	"testing"

	localrl "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

const rateLimitApp = `kind: gateway/service/v1
name: app
group: g
hosts: [app.example.com]
listeners: [gw/guarded]
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes:
  - {name: api, prefix: /api, target: u, rateLimit: {local: {requestsPerSecond: 0.5, burst: 3}}}
  - {name: free, prefix: /, target: u}
`

// rateLimitAppBare is rateLimitApp without its rate limit.
var rateLimitAppBare = strings.Replace(rateLimitApp, ", rateLimit: {local: {requestsPerSecond: 0.5, burst: 3}}", "", 1)

// TestRateLimitOnlyWhereAsked: the local_ratelimit filter is last before
// the router on the listener whose routes have a local limit; only the
// limited route carries a token bucket; every other route, there or on
// another listener, is exactly what it was without the limit, and a
// listener without limits has no filter.
func TestRateLimitOnlyWhereAsked(t *testing.T) {
	hcms, rcs := gatewaySet(t, resolveDocs(t, filtersGateway, rateLimitApp, filtersPlain))
	if got := filterNames(hcms["http-203.0.113.1-80"]); !slices.Equal(got, []string{translate.LocalRateLimitFilter, "envoy.filters.http.router"}) {
		t.Fatalf("guarded filters = %v", got)
	}
	if got := filterNames(hcms["http-203.0.113.2-80"]); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
		t.Errorf("open filters = %v", got)
	}
	g := routesByName(rcs["http-203.0.113.1-80"])
	api := perRoute[localrl.LocalRateLimit](t, g["app/api"], translate.LocalRateLimitFilter)
	if api == nil || api.GetTokenBucket().GetMaxTokens() != 3 || len(api.GetDescriptors()) != 1 {
		t.Fatalf("app/api local limit = %v", api)
	}
	if len(g["app/api"].GetRoute().GetRateLimits()) != 0 {
		t.Errorf("app/api has global rate limit actions: %v", g["app/api"].GetRoute().GetRateLimits())
	}
	_, bare := gatewaySet(t, resolveDocs(t, filtersGateway, rateLimitAppBare, filtersPlain))
	b := routesByName(bare["http-203.0.113.1-80"])
	for _, name := range []string{"app/free", "plain/all"} {
		if !proto.Equal(g[name], b[name]) {
			t.Errorf("%s changed by another route's limit:\n%v\nwant\n%v", name, g[name], b[name])
		}
	}
	if !proto.Equal(rcs["http-203.0.113.2-80"], bare["http-203.0.113.2-80"]) {
		t.Error("the open listener's routes changed")
	}
}

// TestRateLimitChainOrder: the local limit comes after the interceptors
// (ext_authz), before the router.
func TestRateLimitChainOrder(t *testing.T) {
	app := strings.Replace(rateLimitApp, "target: u, rateLimit", "target: u, interceptors: [{type: csrfInterceptor}], rateLimit", 1)
	hcms, _ := gatewaySet(t, resolveDocs(t, filtersGateway, app, filtersPlain))
	want := []string{translate.ExtAuthzFilter, translate.LocalRateLimitFilter, "envoy.filters.http.router"}
	if got := filterNames(hcms["http-203.0.113.1-80"]); !slices.Equal(got, want) {
		t.Fatalf("guarded filters = %v, want %v", got, want)
	}
}

// TestRateLimitGlobalKeptNotServed: with no rate limit service, a global
// limit is a kept problem (a warning) and produces no rate limit actions.
func TestRateLimitGlobalKeptNotServed(t *testing.T) {
	app := strings.Replace(rateLimitApp, "{local: {requestsPerSecond: 0.5, burst: 3}}", "{global: {perRoute: {requests: 10, unit: minute}}}", 1)
	r := resolve(t, parseDocs(t, filtersGateway, app), model.Options{})
	if len(r.Problems) != 1 || r.Problems[0].Rejected || r.Problems[0].Field != "routes[0].rateLimit.global" {
		t.Fatalf("problems = %v, want one kept on routes[0].rateLimit.global", r.Problems)
	}
	hcms, rcs := gatewaySet(t, r)
	if got := filterNames(hcms["http-203.0.113.1-80"]); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
		t.Errorf("guarded filters = %v", got)
	}
	api := routesByName(rcs["http-203.0.113.1-80"])["app/api"]
	if api == nil || len(api.GetRoute().GetRateLimits()) != 0 || len(api.GetTypedPerFilterConfig()) != 0 {
		t.Errorf("app/api = %v, want no rate limit", api)
	}
}

// TestRateLimitServiceDefault: a service's limits apply to each route
// without its own; a route's own replace them, and rateLimit: {} opts out.
func TestRateLimitServiceDefault(t *testing.T) {
	app := `kind: gateway/service/v1
name: app
group: g
hosts: [app.example.com]
listeners: [gw/guarded]
rateLimit: {local: {requestsPerSecond: 100, burst: 200}}
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes:
  - {name: api, prefix: /api, target: u, rateLimit: {local: {requestsPerSecond: 1, burst: 2}}}
  - {name: health, prefix: /health, target: u, rateLimit: {}}
  - {name: rest, prefix: /, target: u}
`
	_, rcs := gatewaySet(t, resolveDocs(t, filtersGateway, app, filtersPlain))
	g := routesByName(rcs["http-203.0.113.1-80"])
	for name, want := range map[string]uint32{"app/api": 2, "app/health": 0, "app/rest": 200, "plain/all": 0} {
		l := perRoute[localrl.LocalRateLimit](t, g[name], translate.LocalRateLimitFilter)
		if got := l.GetTokenBucket().GetMaxTokens(); got != want {
			t.Errorf("%s burst = %d, want %d (%v)", name, got, want, l)
		}
	}
}

func TestRateLimitErrors(t *testing.T) {
	head := "kind: gateway/service/v1\nname: app\nupstreams: [{name: u, endpoints: []}]\nroutes: [{prefix: /, target: u, rateLimit: "
	for name, tc := range map[string]struct{ src, want string }{
		"zero rate":      {"{local: {requestsPerSecond: 0, burst: 1}}", "routes[0].rateLimit.local.requestsPerSecond"},
		"four decimals":  {"{local: {requestsPerSecond: 0.0001, burst: 1}}", "routes[0].rateLimit.local.requestsPerSecond"},
		"no burst":       {"{local: {requestsPerSecond: 1}}", "routes[0].rateLimit.local.burst"},
		"empty global":   {"{global: {}}", "routes[0].rateLimit.global"},
		"bad unit":       {"{global: {perClientIP: {requests: 5, unit: day}}}", "routes[0].rateLimit.global.perClientIP.unit"},
		"no requests":    {"{global: {perRoute: {unit: second}}}", "routes[0].rateLimit.global.perRoute.requests"},
		"unknown field":  {"{local: {requestsPerSecond: 1, burst: 1, rps: 2}}", "rps"},
		"unknown limit":  {"{remote: {}}", "remote"},
		"negative burst": {"{local: {requestsPerSecond: 1, burst: -1}}", "burst"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Parse("app.yaml", []byte(head+tc.src+"}]\n"))
			if err == nil || !strings.HasPrefix(err.Error(), "app.yaml: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want app.yaml and %q", err, tc.want)
			}
		})
	}
	_, err := dsl.Parse("app.yaml", []byte(strings.Replace(head, "{prefix", "{name: \"a b\", prefix", 1)+"{local: {requestsPerSecond: 1, burst: 1}}}]\n"))
	if err == nil || !strings.Contains(err.Error(), "routes[0].name") {
		t.Errorf("route name that is no rate limit identifier: error %v", err)
	}
	svc := "kind: gateway/service/v1\nname: app\nrateLimit: {local: {requestsPerSecond: 1}}\nupstreams: [{name: u, endpoints: []}]\nroutes: [{prefix: /, target: u}]\n"
	if _, err := dsl.Parse("app.yaml", []byte(svc)); err == nil || !strings.HasPrefix(err.Error(), "app.yaml: ") || !strings.Contains(err.Error(), ": rateLimit.local.burst") {
		t.Errorf("service-level error %v, want app.yaml and rateLimit.local.burst", err)
	}
}

// TestRateLimitCacheSeesInPlaceChange: a limit changed in place by its
// source (the same pointer) is seen by the Cache, which keeps its own copy.
func TestRateLimitCacheSeesInPlaceChange(t *testing.T) {
	r := resolveDocs(t, filtersGateway, rateLimitApp, filtersPlain)
	c := translate.NewCache()
	c.ForKind(r, "g", translate.Gateway, c.Shared(r, "g"))
	for i := range r.Config.Services {
		if r.Config.Services[i].Name == "app" {
			r.Config.Services[i].Routes[0].RateLimit.Local.Burst = 9
		}
	}
	got := c.ForKind(r, "g", translate.Gateway, c.Shared(r, "g"))
	want := translate.Group(r, "g", translate.Gateway)
	for typ := range want {
		for i := range want[typ] {
			if !proto.Equal(got[typ][i], want[typ][i]) {
				t.Fatalf("%s[%d]: the cache missed the changed limit", typ, i)
			}
		}
	}
}
