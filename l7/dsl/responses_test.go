package dsl_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
)

const responsesSrc = `kind: gateway/service/v1
name: shop
hosts: [shop.example.com]
requestHeaders: {set: {x-env: prod}, remove: [x-debug]}
responseHeaders: {add: {x-served-by: tlb}}
hsts: {maxAge: 8760h, includeSubDomains: true, preload: true}
errorPages:
  - {statuses: [502, 503], body: "<h1>down</h1>", contentType: text/html}
maintenance: {enabled: true, retryAfter: 10m}
redirectHTTPS: true
upstreams: [{name: main, endpoints: ["198.51.100.1:80"]}]
routes:
  - prefix: /api
    target: main
    headers: [{name: x-canary, exact: "1"}]
    requestHeaders: {add: {x-route: api}}
    errorPages: []
    maintenance: {enabled: false}
    redirectHTTPS: false
  - prefix: /ping
    directResponse: {status: 200, body: pong}
`

// TestParseResponses: every response key of a service and of a route
// reaches the model; a route's errorPages: [] is kept as "none".
func TestParseResponses(t *testing.T) {
	doc, err := dsl.Parse("shop.yaml", []byte(responsesSrc))
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Service
	sr := s.Responses
	if sr == nil || sr.Headers.Request.Set["x-env"] != "prod" || sr.Headers.Request.Remove[0] != "x-debug" ||
		sr.Headers.Response.Add["x-served-by"] != "tlb" {
		t.Fatalf("service headers = %+v", sr)
	}
	if h := sr.HSTS; h.MaxAge != 8760*time.Hour || !h.IncludeSubDomains || !h.Preload || h.Disabled {
		t.Fatalf("hsts = %+v", h)
	}
	if p := sr.ErrorPages; len(p) != 1 || p[0].Statuses[1] != 503 || p[0].ContentType != "text/html" {
		t.Fatalf("error pages = %+v", p)
	}
	if m := sr.Maintenance; !m.Enabled || m.RetryAfter != 10*time.Minute || !sr.RedirectHTTPS {
		t.Fatalf("maintenance = %+v, redirect %v", m, sr.RedirectHTTPS)
	}
	api := s.Routes[0]
	if len(api.Headers) != 1 || api.Responses.Headers.Request.Add["x-route"] != "api" {
		t.Fatalf("api route = %+v", api)
	}
	if api.Responses.ErrorPages == nil || len(model.EffectiveErrorPages(*s, api)) != 0 {
		t.Fatal("errorPages: [] on a route must opt out of the service's pages")
	}
	if model.EffectiveMaintenance(*s, api) != nil || model.EffectiveRedirectHTTPS(*s, api) {
		t.Fatal("the api route turned maintenance and the redirect off")
	}
	ping := s.Routes[1]
	if d := model.DirectResponseOf(ping); d == nil || d.Status != 200 || d.Body != "pong" || len(ping.Targets) != 0 {
		t.Fatalf("ping route = %+v", ping)
	}
	if m := model.EffectiveMaintenance(*s, ping); m == nil || m.Status != 503 || m.Body != model.DefaultMaintenanceBody {
		t.Fatalf("ping maintenance = %+v, want the service's with defaults", m)
	}
}

// TestParseResponseErrorsNameFileAndField: each bad value is refused with
// the file and the field.
func TestParseResponseErrorsNameFileAndField(t *testing.T) {
	head := "kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: []}]\n"
	route := "routes:\n  - prefix: /\n    target: u\n"
	for name, tc := range map[string]struct{ src, want string }{
		"unknown key":         {head + "hsts: {maxAge: 1h, subdomains: true}\n" + route, `unknown field "subdomains"`},
		"pseudo header":       {head + "requestHeaders: {set: {\":path\": /x}}\n" + route, `requestHeaders.set.:path: ":path" is a pseudo-header`},
		"host":                {head + "requestHeaders: {remove: [host]}\n" + route, `requestHeaders.remove[0]: "host" cannot be changed`},
		"hop-by-hop":          {head + "responseHeaders: {add: {connection: close}}\n" + route, `responseHeaders.add.connection: "connection" cannot be changed: a hop-by-hop header`},
		"upper case":          {head + "responseHeaders: {set: {X-Frame: deny}}\n" + route, `responseHeaders.set.X-Frame: "X-Frame" is not a lower-case header name`},
		"hsts by header":      {head + "responseHeaders: {set: {strict-transport-security: max-age=1}}\n" + route, "use hsts"},
		"set and add":         {head + "responseHeaders: {set: {x-a: b}, add: {x-a: c}}\n" + route, "responseHeaders.add.x-a: \"x-a\" is in set too"},
		"percent":             {head + "requestHeaders: {set: {x-a: \"100%\"}}\n" + route, "which Envoy reads as a command"},
		"control char":        {head + "responseHeaders: {set: {x-a: \"a\\nb\"}}\n" + route, "control character"},
		"hsts max age":        {head + "hsts: {maxAge: soon}\n" + route, `hsts.maxAge: want a positive duration`},
		"preload short":       {head + "hsts: {maxAge: 1h, includeSubDomains: true, preload: true}\n" + route, "hsts.preload"},
		"page status":         {head + "errorPages: [{statuses: [302], body: x}]\n" + route, "errorPages[0].statuses[0]: want an error status"},
		"page twice":          {head + "errorPages: [{statuses: [503], body: x}, {statuses: [503], body: z}]\n" + route, "errorPages[1].statuses[0]: status 503 has a page already"},
		"page no body":        {head + "errorPages: [{statuses: [503]}]\n" + route, "errorPages[0].body: required"},
		"page content type":   {head + "errorPages: [{statuses: [503], body: x, contentType: \"text/html; ;\"}]\n" + route, "errorPages[0].contentType"},
		"maintenance status":  {head + "maintenance: {enabled: true, status: 99}\n" + route, "maintenance.status: want 200..599"},
		"retry after":         {head + route + "    maintenance: {enabled: true, retryAfter: 1.5s}\n", "routes[0].maintenance.retryAfter: want a whole number of seconds"},
		"direct with target":  {head + route + "    directResponse: {status: 200}\n", "routes[0].directResponse: a route that answers itself has no target"},
		"direct status":       {head + "routes:\n  - {prefix: /, directResponse: {status: 700}}\n", "routes[0].directResponse.status: want 200..599"},
		"no target no direct": {head + "routes:\n  - {prefix: /}\n", "routes[0].targets: a route needs a target"},
		"redirect type":       {head + route + "    redirectHTTPS: yes please\n", "redirectHTTPS"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Parse("s.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "s.yaml: ") {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestBadResponsesRejectServiceAlone: a bad maintenance block leaves its
// file out; the other service is still served.
func TestBadResponsesRejectServiceAlone(t *testing.T) {
	dir := t.TempDir()
	write := func(n, s string) {
		if err := os.WriteFile(dir+"/"+n, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	good := "kind: gateway/service/v1\nname: a\nhosts: [a.example.com]\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, target: u}\nmaintenance: {enabled: true}\n"
	write("a.yaml", good)
	write("b.yaml", strings.NewReplacer("name: a", "name: b", "a.example.com", "b.example.com").Replace(good))
	d := dsl.NewDir(dir, time.Now)
	if _, errs, _ := d.Load(); len(errs) > 0 {
		t.Fatal(errs)
	}
	write("a.yaml", strings.Replace(good, "{enabled: true}", "{enabled: true, status: 1000}", 1))
	cfg, errs, _ := d.Load()
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "a.yaml: ") || !strings.Contains(errs[0].Error(), "maintenance.status: want 200..599") {
		t.Fatalf("errs = %v", errs)
	}
	if len(cfg.Services) != 2 || cfg.Services[0].Name != "a" || cfg.Services[0].Responses.Maintenance.Status != 0 {
		t.Fatalf("services = %+v, want a's last good version and b", cfg.Services)
	}
}

// FuzzParseResponses: the response keys never panic the parser, and what
// it accepts passes the model's checks.
func FuzzParseResponses(f *testing.F) {
	f.Add(responsesSrc)
	f.Add("kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, directResponse: {status: 204}}\nhsts: {disabled: true}\n")
	f.Fuzz(func(t *testing.T, src string) {
		doc, err := dsl.Parse("f.yaml", []byte(src))
		if err == nil && doc.Service != nil && doc.Service.JWT == nil { // a JWT key is read later, by Dir
			if err := model.CheckService(*doc.Service); err != nil {
				t.Fatalf("accepted an invalid service: %v", err)
			}
		}
	})
}
