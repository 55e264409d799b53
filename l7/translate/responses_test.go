package translate_test

import (
	"slices"
	"strings"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	customresponse "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/custom_response/v3"
	extauthz "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	localresponse "github.com/envoyproxy/go-control-plane/envoy/extensions/http/custom_response/local_response_policy/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/dsl"
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
	cfg := model.Config{Certificates: []model.Certificate{{Name: "gw.c", Chain: []byte("chain"), Key: model.NewPrivateKey([]byte("key"))}}}
	for i, src := range docs {
		d, err := dsl.Parse("doc"+string(rune('a'+i))+".yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if d.Service != nil {
			cfg.Services = append(cfg.Services, *d.Service)
		}
		if d.Gateway != nil {
			cfg.Gateways = append(cfg.Gateways, *d.Gateway)
		}
	}
	r := model.Resolve(cfg, model.Options{})
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
	web = "http-203.0.113.1-80"
	tls = "https-203.0.113.1-443"
)

// TestHTTPSRedirectPerServiceAndRoute: on the HTTP listener the service's
// routes answer 301 to https:// before any function runs (ext_authz
// disabled), except the routes that turned it off; on the HTTPS listener
// they are served; another service on the same listener is untouched.
func TestHTTPSRedirectPerServiceAndRoute(t *testing.T) {
	_, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	w, s := routesByName(rcs[web]), routesByName(rcs[tls])
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

// TestHSTSOnlyOnHTTPS: every route of the HTTPS listener carries the
// service's strict-transport-security header (the default for a service
// that set nothing, none for one that turned it off); no route of the
// HTTP listener does.
func TestHSTSOnlyOnHTTPS(t *testing.T) {
	plain := `kind: gateway/service/v1
name: plain
group: g
hosts: [plain.example.com]
listeners: [gw/web, gw/tls]
upstreams: [{name: u, endpoints: ["198.51.100.3:80"]}]
routes:
  - {name: all, prefix: /, target: u}
`
	_, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther, plain))
	s := routesByName(rcs[tls])
	want := map[string]string{
		"site/api":  "max-age=3600; includeSubDomains|OVERWRITE_IF_EXISTS_OR_ADD",
		"site/down": "max-age=3600; includeSubDomains|OVERWRITE_IF_EXISTS_OR_ADD",
		"site/ping": "max-age=3600; includeSubDomains|OVERWRITE_IF_EXISTS_OR_ADD",
		"plain/all": "max-age=31536000|OVERWRITE_IF_EXISTS_OR_ADD",
		"other/all": "",
	}
	for n, v := range want {
		if got := headerMap(s[n].GetResponseHeadersToAdd())[model.HSTSHeader]; got != v {
			t.Errorf("%s on HTTPS: hsts %q, want %q", n, got, v)
		}
	}
	for n, rt := range routesByName(rcs[web]) {
		if _, ok := headerMap(rt.GetResponseHeadersToAdd())[model.HSTSHeader]; ok || rt.GetMetadata() != nil {
			t.Errorf("%s on plain HTTP sends strict-transport-security", n)
		}
	}
	// Envoy's own replies (503 without healthy upstream, 401, 429...) get
	// the matched route's value through its metadata, on HTTPS only.
	for n, v := range want {
		md := s[n].GetMetadata().GetFilterMetadata()[translate.RouteMetadataNamespace].GetFields()[translate.HSTSMetadataKey].GetStringValue()
		if wantMD, _, _ := strings.Cut(v, "|"); md != wantMD {
			t.Errorf("%s on HTTPS: hsts metadata %q, want %q", n, md, wantMD)
		}
	}
	hcms, _ := gatewaySet(t, respResolved(t, respGateway, respOther))
	if hcms[web].GetLocalReplyConfig() != nil {
		t.Errorf("the HTTP listener maps local replies: %v", hcms[web].GetLocalReplyConfig())
	}
	ms := hcms[tls].GetLocalReplyConfig().GetMappers()
	if len(ms) != 1 || ms[0].GetFilter().GetExtensionFilter() == nil || len(ms[0].GetHeadersToAdd()) != 1 ||
		ms[0].GetHeadersToAdd()[0].GetHeader().GetKey() != model.HSTSHeader ||
		ms[0].GetHeadersToAdd()[0].GetHeader().GetValue() != "%METADATA(ROUTE:tlb:hsts)%" || ms[0].GetStatusCode() != nil {
		t.Errorf("HTTPS local reply mappers = %v, want one adding the route's hsts to every reply", ms)
	}
}

// TestHeaderRulesOnTheirRoutes: the service's rules, then the route's, go
// on the service's routes only; the other service's routes carry none.
func TestHeaderRulesOnTheirRoutes(t *testing.T) {
	_, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	s := routesByName(rcs[tls])
	api := s["site/api"]
	req := headerMap(api.GetRequestHeadersToAdd())
	if req["x-env"] != "prod|OVERWRITE_IF_EXISTS_OR_ADD" || req["x-route"] != "api|APPEND_IF_EXISTS_OR_ADD" || len(req) != 2 {
		t.Errorf("site/api request headers = %v", req)
	}
	if !slices.Equal(api.GetRequestHeadersToRemove(), []string{"x-debug"}) {
		t.Errorf("site/api removes %v", api.GetRequestHeadersToRemove())
	}
	if headerMap(api.GetResponseHeadersToAdd())["x-frame-options"] != "DENY|OVERWRITE_IF_EXISTS_OR_ADD" {
		t.Errorf("site/api response headers = %v", api.GetResponseHeadersToAdd())
	}
	if m := headerMap(s["site/main"].GetRequestHeadersToAdd()); m["x-route"] != "" || m["x-env"] == "" {
		t.Errorf("site/main request headers = %v: the service's, not api's", m)
	}
	o := s["other/all"]
	if len(o.GetRequestHeadersToAdd())+len(o.GetRequestHeadersToRemove())+len(o.GetResponseHeadersToRemove()) > 0 ||
		len(headerMap(o.GetResponseHeadersToAdd())) > 0 {
		t.Errorf("other/all carries header rules it never asked for: %v", o)
	}
}

// TestServerHeaderHidden: no listener announces Envoy, and every gateway
// route table removes an upstream's server header.
func TestServerHeaderHidden(t *testing.T) {
	hcms, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	for n, m := range hcms {
		if m.GetServerHeaderTransformation() != hcm.HttpConnectionManager_PASS_THROUGH {
			t.Errorf("%s: server_header_transformation %v", n, m.GetServerHeaderTransformation())
		}
	}
	for n, rc := range rcs {
		if !slices.Equal(rc.GetResponseHeadersToRemove(), []string{translate.ServerHeader}) {
			t.Errorf("%s: response_headers_to_remove %v", n, rc.GetResponseHeadersToRemove())
		}
	}
}

// TestMaintenanceAndDirectResponse: the route in maintenance answers 503
// with the default body, its content type and retry-after, and no
// function stands before it; the direct response answers itself; the
// service's other routes and the other service are served.
func TestMaintenanceAndDirectResponse(t *testing.T) {
	_, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	for _, l := range []string{web, tls} {
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
		if l == tls && (rs["site/main"].GetRoute() == nil || rs["other/all"].GetRoute() == nil) {
			t.Errorf("%s: routes not in maintenance must be served", l)
		}
	}
	// Turning maintenance off is one field: the route is served again.
	_, rcs = gatewaySet(t, respResolved(t, respGateway, strings.Replace(respSite, "{enabled: true, retryAfter: 120s}", "{enabled: false}", 1), respOther))
	if rt := routesByName(rcs[tls])["site/down"]; rt.GetRoute().GetCluster() != "site/u" || len(headerMap(rt.GetResponseHeadersToAdd())) != 2 {
		t.Errorf("site/down after maintenance = %v", rt)
	}
}

// TestErrorPagesOnlyWhereAsked: custom_response is first on the listeners
// serving a route with pages; those routes carry their service's pages
// (502 and 503 in one matcher, 404 in another); a route that
// opted out, the maintenance route and the other service's routes carry
// none; a listener whose routes have no pages has no filter.
func TestErrorPagesOnlyWhereAsked(t *testing.T) {
	hcms, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	for _, l := range []string{web, tls} {
		if got := filterNames(hcms[l]); len(got) == 0 || got[0] != translate.CustomResponseFilter {
			t.Errorf("%s filters = %v, want custom_response first", l, got)
		}
	}
	rs := routesByName(rcs[tls])
	cr := perRoute[customresponse.CustomResponse](t, rs["site/main"], translate.CustomResponseFilter)
	ms := cr.GetCustomResponseMatcher().GetMatcherList().GetMatchers()
	if len(ms) != 2 {
		t.Fatalf("site/main pages = %v", cr)
	}
	var statuses []string
	for _, p := range ms[0].GetPredicate().GetOrMatcher().GetPredicate() {
		statuses = append(statuses, p.GetSinglePredicate().GetValueMatch().GetExact())
		var in matcher.HttpResponseStatusCodeMatchInput
		if err := p.GetSinglePredicate().GetInput().GetTypedConfig().UnmarshalTo(&in); err != nil {
			t.Errorf("page 0 input: %v", err)
		}
	}
	if !slices.Equal(statuses, []string{"502", "503"}) {
		t.Errorf("page 0 statuses = %v", statuses)
	}
	var pol localresponse.LocalResponsePolicy
	if err := ms[0].GetOnMatch().GetAction().GetTypedConfig().UnmarshalTo(&pol); err != nil {
		t.Fatal(err)
	}
	if pol.GetBody().GetInlineString() != "<h1>Sorry</h1>" || pol.GetBodyFormat().GetContentType() != "text/html" || pol.GetStatusCode() != nil {
		t.Errorf("page 0 policy = %v", &pol)
	}
	if got := ms[1].GetPredicate().GetSinglePredicate().GetValueMatch().GetExact(); got != "404" {
		t.Errorf("page 1 predicate = %v, want 404 alone", ms[1].GetPredicate())
	}
	for _, n := range []string{"site/api", "site/down", "other/all"} {
		if _, ok := rs[n].GetTypedPerFilterConfig()[translate.CustomResponseFilter]; ok {
			t.Errorf("%s carries error pages", n)
		}
	}
	if a := perRoute[extauthz.ExtAuthzPerRoute](t, rs["other/all"], translate.ExtAuthzFilter); !a.GetDisabled() {
		t.Errorf("other/all ext_authz = %v", a)
	}
	hcms, _ = gatewaySet(t, respResolved(t, respGateway, respOther))
	for l, m := range hcms {
		if got := filterNames(m); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
			t.Errorf("%s without pages: filters %v", l, got)
		}
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

// TestErrorPagesKeepTheRolesMapping: a 401 page on the JWT service's
// listener puts custom_response first and leaves the local reply mapper
// that turns RBAC's 403 for a bad roles claim into 401 as it was.
func TestErrorPagesKeepTheRolesMapping(t *testing.T) {
	hcmsBefore, _ := gatewaySet(t, jwtDir(t, jwtAPI))
	withPages := strings.Replace(jwtAPI, "jwt:\n", "errorPages: [{statuses: [401, 403], body: '{\"error\":\"denied\"}', contentType: application/json}]\njwt:\n", 1)
	hcms, rcs := gatewaySet(t, jwtDir(t, withPages))
	const guarded = "http-203.0.113.1-80"
	want := []string{translate.CustomResponseFilter, translate.HeaderMutationFilter, translate.JWTFilter, translate.RBACFilter, "envoy.filters.http.router"}
	if got := filterNames(hcms[guarded]); !slices.Equal(got, want) {
		t.Fatalf("guarded filters = %v, want %v", got, want)
	}
	if before, after := hcmsBefore[guarded].GetLocalReplyConfig(), hcms[guarded].GetLocalReplyConfig(); after == nil || !proto.Equal(before, after) {
		t.Errorf("local reply config changed: %v -> %v", before, after)
	}
	g := routesByName(rcs[guarded])
	if _, ok := g["api/admin"].GetTypedPerFilterConfig()[translate.CustomResponseFilter]; !ok {
		t.Error("api/admin has no error pages")
	}
	if _, ok := g["plain/all"].GetTypedPerFilterConfig()[translate.CustomResponseFilter]; ok {
		t.Error("plain/all got the api's error pages")
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
