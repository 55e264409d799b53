package translate_test

import (
	"slices"
	"strings"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// respGateway: "web" is plain HTTP, "tls" is HTTPS; both serve "site" and
// "other" (a service that asks for nothing).
const respGateway = `kind: gateway/gateway/v1
name: gw
group: g
listeners:
  - {name: web, vip: 203.0.113.1, port: 80, protocol: HTTP}
  - name: tls
    vip: 203.0.113.1
    port: 443
    protocol: HTTPS
    certificates: [{name: c, sni: [site.example.com, other.example.com, plain.example.com], certFile: c.crt, keyFile: c.key}]
`

const respSite = `kind: gateway/service/v1
name: site
group: g
hosts: [site.example.com]
listeners: [gw/web, gw/tls]
redirectHTTPS: true
requestHeaders: {set: {x-env: prod}, remove: [x-debug]}
responseHeaders: {set: {x-frame-options: DENY}}
hsts: {maxAge: 3600s, includeSubDomains: true}
errorPages:
  - {statuses: [502, 503], body: "<h1>Sorry</h1>", contentType: text/html}
  - {statuses: [404], body: "not here"}
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes:
  - name: api
    prefix: /api
    target: u
    requestHeaders: {add: {x-route: api}}
    errorPages: []
    interceptors: [{type: sessionInterceptor}]
  - name: down
    prefix: /down
    target: u
    redirectHTTPS: false
    maintenance: {enabled: true, retryAfter: 120s}
  - name: ping
    prefix: /ping
    redirectHTTPS: false
    directResponse: {status: 200, body: pong}
  - name: main
    prefix: /
    target: u
`

const respOther = `kind: gateway/service/v1
name: other
group: g
hosts: [other.example.com]
listeners: [gw/web, gw/tls]
hsts: {disabled: true}
upstreams: [{name: u, endpoints: ["198.51.100.2:80"]}]
routes:
  - {name: all, prefix: /, target: u}
`

// respResolved resolves the docs with a stand-in certificate for gw.c.
func respResolved(t *testing.T, docs ...string) model.Resolved {
	t.Helper()
	cfg := parseDocs(t, docs...)
	cfg.Certificates = []model.Certificate{{Name: "gw.c", Chain: []byte("chain"), Key: model.NewPrivateKey([]byte("key"))}}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	return r
}

func headerMap(hs []*core.HeaderValueOption) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		out[h.GetHeader().GetKey()] = h.GetHeader().GetValue() + "|" + h.GetAppendAction().String()
	}
	return out
}

const (
	web    = "http-203.0.113.1-80"
	webTLS = "https-203.0.113.1-443"
)

// TestHTTPSRedirectPerServiceAndRoute: on the HTTP listener the service's
// routes answer 301 to https:// before any function runs (ext_authz
// disabled), except the routes that turned it off; on the HTTPS listener
// they are served; another service on the same listener is untouched.
func TestHTTPSRedirectPerServiceAndRoute(t *testing.T) {
	_, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	w, s := routesByName(rcs[web]), routesByName(rcs[webTLS])
	for _, n := range []string{"site/api", "site/main"} {
		rd := w[n].GetRedirect()
		if !rd.GetHttpsRedirect() || rd.GetResponseCode() != route.RedirectAction_MOVED_PERMANENTLY {
			t.Errorf("%s on HTTP = %v, want a 301 to https", n, w[n].GetAction())
		}
		if a := authzOf(t, w[n]); a != nil && !a.GetDisabled() {
			t.Errorf("%s on HTTP calls the authorization service before redirecting", n)
		}
		if s[n].GetRoute() == nil {
			t.Errorf("%s on HTTPS = %v, want it served", n, s[n].GetAction())
		}
	}
	if a := authzOf(t, s["site/api"]); a.GetCheckSettings() == nil {
		t.Errorf("site/api on HTTPS lost its interceptors: %v", a)
	}
	if w["site/down"].GetRedirect() != nil || w["site/ping"].GetRedirect() != nil {
		t.Error("routes with redirectHTTPS: false redirect")
	}
	if w["other/all"].GetRoute().GetCluster() != "other/u" {
		t.Errorf("other/all on HTTP = %v, want it served", w["other/all"].GetAction())
	}
}

// TestMaintenanceAndDirectResponse: the route in maintenance answers 503
// with the default body, its content type and retry-after, and no
// function stands before it; the direct response answers itself; the
// service's other routes and the other service are served.
func TestMaintenanceAndDirectResponse(t *testing.T) {
	_, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	for _, l := range []string{web, webTLS} {
		rs := routesByName(rcs[l])
		down := rs["site/down"]
		d := down.GetDirectResponse()
		if d.GetStatus() != 503 || d.GetBody().GetInlineString() != model.DefaultMaintenanceBody {
			t.Errorf("%s site/down = %v", l, down.GetAction())
		}
		h := headerMap(down.GetResponseHeadersToAdd())
		if h["retry-after"] != "120|OVERWRITE_IF_EXISTS_OR_ADD" || h["content-type"] != model.DefaultContentType+"|OVERWRITE_IF_EXISTS_OR_ADD" {
			t.Errorf("%s site/down headers = %v", l, h)
		}
		if _, ok := down.GetTypedPerFilterConfig()[translate.CustomResponseFilter]; ok {
			t.Errorf("%s site/down: an error page would replace the maintenance answer", l)
		}
		if a := authzOf(t, down); a != nil && !a.GetDisabled() {
			t.Errorf("%s site/down runs interceptors", l)
		}
		ping := rs["site/ping"].GetDirectResponse()
		if ping.GetStatus() != 200 || ping.GetBody().GetInlineString() != "pong" {
			t.Errorf("%s site/ping = %v", l, rs["site/ping"].GetAction())
		}
		if l == webTLS && (rs["site/main"].GetRoute() == nil || rs["other/all"].GetRoute() == nil) {
			t.Errorf("%s: routes not in maintenance must be served", l)
		}
	}
	// Turning maintenance off is one field: the route is served again.
	_, rcs = gatewaySet(t, respResolved(t, respGateway, strings.Replace(respSite, "{enabled: true, retryAfter: 120s}", "{enabled: false}", 1), respOther))
	if rt := routesByName(rcs[webTLS])["site/down"]; rt.GetRoute().GetCluster() != "site/u" || len(headerMap(rt.GetResponseHeadersToAdd())) != 2 {
		t.Errorf("site/down after maintenance = %v", rt)
	}
}

// TestListenerRedirectUnchanged: a listener with redirectHTTPS still
// answers everything with one catch-all 301 and runs the router alone,
// whatever the services of the group ask for.
func TestListenerRedirectUnchanged(t *testing.T) {
	gw := respGateway + "  - {name: r, vip: 203.0.113.3, port: 80, protocol: HTTP, redirectHTTPS: true}\n"
	hcms, rcs := gatewaySet(t, respResolved(t, gw, respSite, respOther))
	const r = "http-203.0.113.3-80"
	if got := filterNames(hcms[r]); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
		t.Errorf("redirect listener filters = %v", got)
	}
	vhs := rcs[r].GetVirtualHosts()
	if len(vhs) != 1 || len(vhs[0].GetRoutes()) != 1 || !slices.Equal(vhs[0].GetDomains(), []string{"*"}) ||
		!vhs[0].GetRoutes()[0].GetRedirect().GetHttpsRedirect() || vhs[0].GetRoutes()[0].GetMatch().GetPrefix() != "/" {
		t.Errorf("redirect listener routes = %v", rcs[r])
	}
}

// TestResponsesCacheSeesChanges: the Cache rebuilds the routes when a
// service's maintenance is turned on in place (the same pointer) and when
// a route's redirect is turned off, for gateways and proxyless clients, and
// its output stays equal to a fresh translation.
func TestResponsesCacheSeesChanges(t *testing.T) {
	r := respResolved(t, respGateway, respSite, respOther)
	c := translate.NewCache()
	for _, kind := range []translate.Kind{translate.Gateway, translate.GRPC} {
		c.ForKind(r, "g", kind, c.Shared(r, "g"))
	}
	var site *model.Service
	for i := range r.Config.Services {
		if r.Config.Services[i].Name == "site" {
			site = &r.Config.Services[i]
		}
	}
	steps := map[string]func(){
		"service maintenance on": func() { site.Responses.Maintenance = &model.Maintenance{Enabled: true} },
		"maintenance body":       func() { site.Responses.Maintenance.Body = "later" },
		"route redirect off":     func() { site.Routes[3].Responses = &model.RouteResponses{RedirectHTTPS: new(bool)} },
	}
	for _, name := range []string{"service maintenance on", "maintenance body", "route redirect off"} {
		steps[name]()
		for _, kind := range []translate.Kind{translate.Gateway, translate.GRPC} {
			got := c.ForKind(r, "g", kind, c.Shared(r, "g"))
			want := translate.Group(r, "g", kind)
			for typ := range want {
				for i := range want[typ] {
					if !proto.Equal(got[typ][i], want[typ][i]) {
						t.Fatalf("%s, %s: %s[%d]: the cache missed the change", name, kind, typ, i)
					}
				}
			}
		}
	}
	rc := translate.Group(r, "g", translate.Gateway)
	for _, res := range rc[resource.RouteType] {
		rt := routesByName(res.(*route.RouteConfiguration))["site/main"]
		if rt.GetDirectResponse().GetBody().GetInlineString() != "later" {
			t.Errorf("%s: site/main = %v, want the maintenance answer", res.(*route.RouteConfiguration).GetName(), rt)
		}
	}
}

// TestProxylessRoutesGetOnlyTheAction: proxyless gRPC clients get the
// maintenance and direct answers (the route's action) but no redirect,
// header rules, HSTS or error pages, which grpc-go does not apply.
func TestProxylessRoutesGetOnlyTheAction(t *testing.T) {
	set := translate.Group(respResolved(t, respGateway, respSite, respOther), "g", translate.GRPC)
	rs := map[string]*route.Route{}
	for _, res := range set[resource.RouteType] {
		for n, rt := range routesByName(res.(*route.RouteConfiguration)) {
			rs[n] = rt
		}
	}
	if rs["site/down"].GetDirectResponse().GetStatus() != 503 || rs["site/ping"].GetDirectResponse().GetStatus() != 200 {
		t.Errorf("maintenance and direct answers = %v, %v", rs["site/down"].GetAction(), rs["site/ping"].GetAction())
	}
	for n, rt := range rs {
		if rt.GetRedirect() != nil || len(rt.GetRequestHeadersToAdd())+len(rt.GetResponseHeadersToAdd())+len(rt.GetTypedPerFilterConfig()) > 0 || rt.GetMetadata() != nil {
			t.Errorf("%s for gRPC clients = %v", n, rt)
		}
	}
	if rs["site/main"].GetRoute().GetCluster() != "site/u" {
		t.Errorf("site/main for gRPC clients = %v", rs["site/main"])
	}
}
