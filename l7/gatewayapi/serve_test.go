package gatewayapi

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// everyMatchAndFilter is an HTTPRoute of namespace ns with no hostname
// on infra/gw's http listener, using every match and filter Build
// translates.
func everyMatchAndFilter(ns, name string) *gatewayv1.HTTPRoute {
	regex := gatewayv1.HeaderMatchRegularExpression
	qregex := gatewayv1.QueryParamMatchRegularExpression
	get := gatewayv1.HTTPMethodGet
	web := func(w int32) []gatewayv1.HTTPBackendRef {
		return httpBackends(backendRef("", "web", 8080, ptr(w)), backendRef("", "web2", 8080, ptr(int32(1))))
	}
	rule := func(m gatewayv1.HTTPRouteMatch, fs ...gatewayv1.HTTPRouteFilter) gatewayv1.HTTPRouteRule {
		return gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{m}, Filters: fs, BackendRefs: web(1)}
	}
	prefix := func(p string) gatewayv1.HTTPRouteMatch {
		return gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, p)}
	}
	api := rule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/api/"), Method: &get,
		Headers:     []gatewayv1.HTTPHeaderMatch{{Name: "X-Env", Value: "canary"}, {Type: &regex, Name: "X-Version", Value: "^v[12]$"}},
		QueryParams: []gatewayv1.HTTPQueryParamMatch{{Name: "debug", Value: "1"}, {Type: &qregex, Name: "id", Value: "^[0-9]+$"}}},
		gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
			Set: []gatewayv1.HTTPHeader{{Name: "X-Set", Value: "1"}}, Add: []gatewayv1.HTTPHeader{{Name: "X-Add", Value: "2"}}, Remove: []string{"X-Drop"}}},
		gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{
			Set: []gatewayv1.HTTPHeader{{Name: "Cache-Control", Value: "no-store"}}}},
		gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
			BackendRef: backendRef("", "web2", 8080, nil).BackendObjectReference, Percent: ptr(int32(25))}},
		gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{
			BackendRef: backendRef("", "web2", 8080, nil).BackendObjectReference, Fraction: &gatewayv1.Fraction{Numerator: 1, Denominator: ptr(int32(1000))}}},
	)
	api.BackendRefs = web(0) // web gets nothing, web2 all
	old := gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{{Path: pathMatch(gatewayv1.PathMatchExact, "/old")}},
		Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
			Scheme: ptr("https"), Hostname: ptr(gatewayv1.PreciseHostname("new.example.com")), Port: ptr(gatewayv1.PortNumber(8443)), StatusCode: ptr(301),
			Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr("/new")}}}}}
	moved := gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefix("/moved")},
		Filters: []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
			Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr("/here/")}}}}}
	strip := rule(prefix("/strip"), gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
		Hostname: ptr(gatewayv1.PreciseHostname("internal.example.com")),
		Path:     &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr("/")}}})
	v2 := rule(prefix("/v1"), gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
		Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr("/v2")}}})
	full := rule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchRegularExpression, "/r/[0-9]+")},
		gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
			Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr("/index.html")}}})
	cors := rule(prefix("/cors"), gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
		AllowOrigins: []gatewayv1.CORSOrigin{"https://app.example.com"}, AllowCredentials: ptr(true),
		AllowMethods: []gatewayv1.HTTPMethodWithWildcard{"GET", "POST"}, AllowHeaders: []gatewayv1.HTTPHeaderName{"x-a"},
		ExposeHeaders: []gatewayv1.HTTPHeaderName{"x-b"}, MaxAge: 600}})
	timeouts := rule(prefix("/slow"))
	timeouts.Timeouts = &gatewayv1.HTTPRouteTimeouts{Request: ptr(gatewayv1.Duration("10s")), BackendRequest: ptr(gatewayv1.Duration("2s"))}
	none := gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{prefix("/none")}}
	zero := rule(prefix("/zero"))
	zero.BackendRefs = httpBackends(backendRef("", "web", 8080, ptr(int32(0))), backendRef("", "web2", 8080, ptr(int32(0))))
	hr := testHTTPRoute(name, api, old, moved, strip, v2, full, cors, timeouts, none, zero)
	hr.ObjectMeta = meta(ns, name)
	return hr
}

// TestBuildIsServed: what Build makes of every match and filter, of
// routes of two namespaces on one listener with no hostname (the
// catch-all "*", no catch-all namespace listed), of a route on the HTTPS
// listener, a GRPCRoute and a TLSRoute without hostnames, passes
// model.Resolve with no problem, and its Envoy resources validate. Each
// route is served on its own listener only, and a PathPrefix matches
// whole segments.
func TestBuildIsServed(t *testing.T) {
	in := world(t)
	in.Namespaces = append(in.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	for _, ns := range []string{"app", "team"} {
		for _, n := range []string{"web", "web2"} {
			if ns == "app" && n == "web" {
				continue // in world already
			}
			in.Services = append(in.Services, testService(ns, n, corev1.ServicePort{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}))
			in.EndpointSlices = append(in.EndpointSlices, endpointSlice(ns, n, "http", 9090, map[string]bool{"10.0.1.1": true}))
		}
	}
	in.EndpointSlices = append(in.EndpointSlices, endpointSlice("team", "web", "http", 9090, map[string]bool{"10.0.2.1": true}))
	app := everyMatchAndFilter("app", "all")
	team := everyMatchAndFilter("team", "all")
	team.CreationTimestamp = metav1.NewTime(testNow.Add(-time.Minute)) // younger: its equal matches go after app's
	team.Spec.Rules = append(team.Spec.Rules, gatewayv1.HTTPRouteRule{
		Matches: []gatewayv1.HTTPRouteMatch{{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/team")}}, BackendRefs: httpBackends(backendRef("", "web", 8080, nil))})
	shop := testHTTPRoute("shop")
	shop.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", "https")}
	shop.Spec.Hostnames = []gatewayv1.Hostname{"shop.example.com"}
	in.HTTPRoutes = append(in.HTTPRoutes, app, team, shop)
	in.GRPCRoutes = append(in.GRPCRoutes, &gatewayv1.GRPCRoute{ObjectMeta: meta("app", "g"), Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "http")}},
		Rules: []gatewayv1.GRPCRouteRule{{
			Matches:     []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: ptr("shop.Cart"), Method: ptr("Add")}}},
			BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backendRef("", "web", 8080, nil)}},
		}},
	}})
	in.TLSRoutes = append(in.TLSRoutes, testTLSRoute("t", nil, backendRef("", "web", 8080, nil)))

	res := Build(in)
	for key, st := range res.Status.HTTPRoutes {
		for _, p := range st.Parents {
			for _, c := range p.Conditions {
				if c.Status != metav1.ConditionTrue {
					t.Errorf("HTTPRoute %s: %s %s: %s", key, c.Type, c.Reason, c.Message)
				}
			}
		}
	}
	r := model.Resolve(res.Config, model.Options{})
	for _, p := range r.Problems {
		t.Errorf("model problem: %v", p)
	}
	if len(r.Config.Services) != len(res.Config.Services) || len(res.Config.Services) != 5 {
		t.Fatalf("resolved %d of %d services; want all 5", len(r.Config.Services), len(res.Config.Services))
	}
	set := translate.Group(r, "edge", translate.Gateway)
	if err := validate.Set(set); err != nil {
		t.Fatalf("translated set fails validation: %v", err)
	}

	hosts := map[string][]string{} // listener -> "host: routes"
	prefixes := map[string]string{}
	for _, rc := range translate.ListenerRoutes(r, "edge") {
		for _, vh := range rc.GetVirtualHosts() {
			var rs []string
			for _, rt := range vh.GetRoutes() {
				rs = append(rs, rt.GetName())
				if p := rt.GetMatch().GetPathSeparatedPrefix(); p != "" {
					prefixes[rt.GetName()] = p
				}
			}
			hosts[rc.GetName()] = append(hosts[rc.GetName()], vh.GetName()+": "+strings.Join(rs, " "))
		}
	}
	http := strings.Join(hosts["http-"+testVIP+"-80"], "\n")
	for _, w := range []string{"hr.app.all/rule-0", "hr.team.all/rule-0", "hr.team.all/rule-10", "gr.app.g/rule-0"} {
		if !strings.Contains(http, w) {
			t.Errorf("http listener lacks %s:\n%s", w, http)
		}
	}
	if strings.Contains(http, "hr.app.shop") || !strings.HasPrefix(http, "*: ") {
		t.Errorf("http listener: want one virtual host * without the HTTPS route, got\n%s", http)
	}
	if https := strings.Join(hosts["https-"+testVIP+"-443"], "\n"); https != "shop.example.com: hr.app.shop/rule-0" {
		t.Errorf("https listener %q; want only hr.app.shop", https)
	}
	if first, second := strings.Index(http, "hr.app.all/rule-0"), strings.Index(http, "hr.team.all/rule-0"); first > second {
		t.Errorf("the younger route's equal match comes first:\n%s", http)
	}
	for name, want := range map[string]string{"hr.app.all/rule-0": "/api", "hr.team.all/rule-10": "/team", "hr.app.all/rule-3": "/strip"} {
		if prefixes[name] != want {
			t.Errorf("%s: path_separated_prefix %q, want %q", name, prefixes[name], want)
		}
	}
}
