package translate_test

import (
	"slices"
	"strings"
	"testing"

	cors "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/translate"
)

const corsApp = `kind: gateway/service/v1
name: app
group: g
hosts: [app.example.com]
listeners: [gw/guarded]
cors:
  allowOrigins: [https://web.example.com, https://admin.example.com]
  allowMethods: [GET, POST]
  allowHeaders: [content-type, x-csrf-token]
  exposeHeaders: [x-request-id]
  allowCredentials: true
  maxAge: 10m
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes:
  - {name: api, prefix: /api, target: u}
  - {name: public, prefix: /public, target: u, cors: {allowOrigins: ["*"], allowMethods: [GET]}}
`

// TestCORSOnlyWhereAsked: the CORS filter is first on the listener whose
// routes have a policy; each route carries its service's policy or its
// own; another service's routes there carry none; a listener without CORS
// has no filter.
func TestCORSOnlyWhereAsked(t *testing.T) {
	hcms, rcs := gatewaySet(t, resolveDocs(t, filtersGateway, corsApp, filtersPlain))
	if got := filterNames(hcms["http-203.0.113.1-80"]); !slices.Equal(got, []string{translate.CORSFilter, "envoy.filters.http.router"}) {
		t.Fatalf("guarded filters = %v", got)
	}
	if got := filterNames(hcms["http-203.0.113.2-80"]); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
		t.Errorf("open filters = %v", got)
	}
	g := routesByName(rcs["http-203.0.113.1-80"])
	api := perRoute[cors.CorsPolicy](t, g["app/api"], translate.CORSFilter)
	var origins []string
	for _, m := range api.GetAllowOriginStringMatch() {
		origins = append(origins, m.GetExact())
	}
	if !slices.Equal(origins, []string{"https://web.example.com", "https://admin.example.com"}) || api.GetAllowMethods() != "GET,POST" ||
		api.GetAllowHeaders() != "content-type,x-csrf-token" || api.GetExposeHeaders() != "x-request-id" ||
		!api.GetAllowCredentials().GetValue() || api.GetMaxAge() != "600" || api.GetForwardNotMatchingPreflights().GetValue() {
		t.Errorf("app/api policy = %v", api)
	}
	pub := perRoute[cors.CorsPolicy](t, g["app/public"], translate.CORSFilter)
	if len(pub.GetAllowOriginStringMatch()) != 1 || pub.GetAllowOriginStringMatch()[0].GetSafeRegex().GetRegex() != ".*" ||
		pub.GetAllowCredentials().GetValue() || pub.GetAllowMethods() != "GET" || pub.GetMaxAge() != "" {
		t.Errorf("app/public policy = %v, want its own (any origin, GET, no credentials)", pub)
	}
	if perRoute[cors.CorsPolicy](t, g["plain/all"], translate.CORSFilter) != nil {
		t.Error("plain/all has a CORS policy it never asked for")
	}
}

func TestCORSErrors(t *testing.T) {
	head := "kind: gateway/service/v1\nname: app\nupstreams: [{name: u, endpoints: []}]\nroutes: [{prefix: /, target: u}]\n"
	for name, tc := range map[string]struct{ src, want string }{
		"star with credentials": {"cors: {allowOrigins: [\"*\"], allowCredentials: true}", "cors.allowOrigins[0]"},
		"no origins":            {"cors: {allowMethods: [GET]}", "cors.allowOrigins"},
		"origin with path":      {"cors: {allowOrigins: [\"https://a.example.com/x\"]}", "cors.allowOrigins[0]"},
		"lower-case method":     {"cors: {allowOrigins: [\"*\"], allowMethods: [get]}", "cors.allowMethods[0]"},
		"bad header":            {"cors: {allowOrigins: [\"*\"], allowHeaders: [\"a b\"]}", "cors.allowHeaders[0]"},
		"bad max age":           {"cors: {allowOrigins: [\"*\"], maxAge: soon}", "cors.maxAge"},
		"fractional max age":    {"cors: {allowOrigins: [\"*\"], maxAge: 1500ms}", "cors.maxAge"},
		"unknown field":         {"cors: {allowOrigins: [\"*\"], allowOrigin: x}", "allowOrigin"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Parse("app.yaml", []byte(head+tc.src+"\n"))
			if err == nil || !strings.HasPrefix(err.Error(), "app.yaml: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want app.yaml and %q", err, tc.want)
			}
		})
	}
	_, err := dsl.Parse("app.yaml", []byte(strings.Replace(head, "routes: [{prefix: /, target: u}]", "routes: [{prefix: /, target: u, cors: {allowOrigins: [\"HTTPS://A\"]}}]", 1)))
	if err == nil || !strings.Contains(err.Error(), "routes[0].cors.allowOrigins[0]") {
		t.Fatalf("route error %v", err)
	}
}
