package gatewayapi

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// upWeb is the model upstream of app/web:8080.
const upWeb = "app.web.8080"

func toWeb(w uint32) []model.WeightedTarget {
	return []model.WeightedTarget{{Upstream: upWeb, Weight: w}}
}

func pathMatch(typ gatewayv1.PathMatchType, v string) *gatewayv1.HTTPPathMatch {
	return &gatewayv1.HTTPPathMatch{Type: &typ, Value: &v}
}

func webRule(ms ...gatewayv1.HTTPRouteMatch) gatewayv1.HTTPRouteRule {
	return gatewayv1.HTTPRouteRule{Matches: ms, BackendRefs: httpBackends(backendRef("", "web", 8080, nil))}
}

func withFilters(r gatewayv1.HTTPRouteRule, fs ...gatewayv1.HTTPRouteFilter) gatewayv1.HTTPRouteRule {
	r.Filters = fs
	return r
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestHTTPRouteTranslation(t *testing.T) {
	header := gatewayv1.HeaderMatchRegularExpression
	query := gatewayv1.QueryParamMatchRegularExpression
	for name, tc := range map[string]struct {
		rules []gatewayv1.HTTPRouteRule
		want  []model.Route
	}{
		"default match is prefix /": {
			rules: []gatewayv1.HTTPRouteRule{webRule()},
			want:  []model.Route{{Name: "rule-0", Prefix: "/", Targets: toWeb(1)}},
		},
		"exact, regex and prefix in precedence order": {
			rules: []gatewayv1.HTTPRouteRule{
				webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/a")}),
				webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/a/b")}),
				webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchRegularExpression, "/r/[0-9]+")}),
				webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchExact, "/a/exact")}),
			},
			want: []model.Route{
				{Name: "rule-3", Exact: "/a/exact", Targets: toWeb(1)},
				{Name: "rule-2", Regex: "/r/[0-9]+", Targets: toWeb(1)},
				{Name: "rule-1", Prefix: "/a/b", Targets: toWeb(1)},
				{Name: "rule-0", Prefix: "/a", Targets: toWeb(1)},
			},
		},
		"method, headers and queries; more specific first": {
			rules: []gatewayv1.HTTPRouteRule{
				webRule(gatewayv1.HTTPRouteMatch{}),
				webRule(gatewayv1.HTTPRouteMatch{QueryParams: []gatewayv1.HTTPQueryParamMatch{{Name: "v", Value: "1"}, {Type: &query, Name: "q", Value: "^x"}}}),
				webRule(gatewayv1.HTTPRouteMatch{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-Env", Value: "canary"}, {Type: &header, Name: "X-Id", Value: "^[a-f]+$"}}}),
				webRule(gatewayv1.HTTPRouteMatch{Method: ptr(gatewayv1.HTTPMethodPost)}),
			},
			want: []model.Route{
				{Name: "rule-3", Prefix: "/", Method: "POST", Targets: toWeb(1)},
				{Name: "rule-2", Prefix: "/", Headers: []model.HeaderMatch{{Name: "x-env", Exact: "canary"}, {Name: "x-id", Regex: "^[a-f]+$"}}, Targets: toWeb(1)},
				{Name: "rule-1", Prefix: "/", Queries: []model.QueryMatch{{Name: "v", Exact: "1"}, {Name: "q", Regex: "^x"}}, Targets: toWeb(1)},
				{Name: "rule-0", Prefix: "/", Targets: toWeb(1)},
			},
		},
		"named rule with two matches": {
			rules: []gatewayv1.HTTPRouteRule{func() gatewayv1.HTTPRouteRule {
				r := webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchExact, "/x")}, gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchExact, "/y")})
				r.Name = ptr(gatewayv1.SectionName("pair"))
				return r
			}()},
			want: []model.Route{{Name: "pair-0", Exact: "/x", Targets: toWeb(1)}, {Name: "pair-1", Exact: "/y", Targets: toWeb(1)}},
		},
		"the first of two equal matches wins": {
			rules: []gatewayv1.HTTPRouteRule{
				webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchExact, "/x"), Headers: []gatewayv1.HTTPHeaderMatch{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}}}),
				{Matches: []gatewayv1.HTTPRouteMatch{{Path: pathMatch(gatewayv1.PathMatchExact, "/x"), Headers: []gatewayv1.HTTPHeaderMatch{{Name: "b", Value: "2"}, {Name: "a", Value: "1"}}}}},
				{Matches: []gatewayv1.HTTPRouteMatch{{Path: pathMatch(gatewayv1.PathMatchExact, "/x"), Headers: []gatewayv1.HTTPHeaderMatch{{Name: "a", Value: "1"}}}}},
			},
			want: []model.Route{
				{Name: "rule-0", Exact: "/x", Headers: []model.HeaderMatch{{Name: "a", Exact: "1"}, {Name: "b", Exact: "2"}}, Targets: toWeb(1)},
				{Name: "rule-2", Exact: "/x", Headers: []model.HeaderMatch{{Name: "a", Exact: "1"}}, Responses: internalError()},
			},
		},
		"weights, zero sends none": {
			rules: []gatewayv1.HTTPRouteRule{{BackendRefs: httpBackends(backendRef("", "web", 8080, ptr(int32(3))), backendRef("", "web2", 8080, ptr(int32(0))))}},
			want:  []model.Route{{Name: "rule-0", Prefix: "/", Targets: toWeb(3)}},
		},
		"all weights zero answers 500": {
			rules: []gatewayv1.HTTPRouteRule{{BackendRefs: httpBackends(backendRef("", "web", 8080, ptr(int32(0))))}},
			want:  []model.Route{{Name: "rule-0", Prefix: "/", Responses: internalError()}},
		},
		"no backendRefs answers 500": {
			rules: []gatewayv1.HTTPRouteRule{{}},
			want:  []model.Route{{Name: "rule-0", Prefix: "/", Responses: internalError()}},
		},
		"missing backend answers 500": {
			rules: []gatewayv1.HTTPRouteRule{{BackendRefs: httpBackends(backendRef("", "nope", 8080, nil))}},
			want:  []model.Route{{Name: "rule-0", Prefix: "/", Responses: internalError()}},
		},
		"a missing backend's share answers 500": {
			rules: []gatewayv1.HTTPRouteRule{{BackendRefs: httpBackends(backendRef("", "web", 8080, ptr(int32(3))), backendRef("", "nope", 8080, ptr(int32(2))),
				backendRef("", "gone", 8080, ptr(int32(0))))}},
			want: []model.Route{{Name: "rule-0", Prefix: "/", Targets: toWeb(3), FailedWeight: 2}},
		},
		"header modifiers": {
			rules: []gatewayv1.HTTPRouteRule{withFilters(webRule(),
				gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{
					Set: []gatewayv1.HTTPHeader{{Name: "X-Set", Value: "1"}}, Add: []gatewayv1.HTTPHeader{{Name: "X-Add", Value: "2"}}, Remove: []string{"X-Drop"}}},
				gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{
					Set: []gatewayv1.HTTPHeader{{Name: "Cache-Control", Value: "no-store"}}}},
			)},
			want: []model.Route{{Name: "rule-0", Prefix: "/", Targets: toWeb(1), Responses: &model.RouteResponses{Headers: &model.HeaderRules{
				Request:  model.HeaderEdits{Set: map[string]string{"x-set": "1"}, Add: map[string]string{"x-add": "2"}, Remove: []string{"x-drop"}},
				Response: model.HeaderEdits{Set: map[string]string{"cache-control": "no-store"}},
			}}}},
		},
		"redirect": {
			rules: []gatewayv1.HTTPRouteRule{withFilters(gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/old")}}},
				gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
					Scheme: ptr("https"), Hostname: ptr(gatewayv1.PreciseHostname("new.example.com")), Port: ptr(int32(8443)), StatusCode: ptr(301),
					Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr("/new")}}},
			)},
			want: []model.Route{{Name: "rule-0", Prefix: "/old", Redirect: &model.Redirect{Scheme: "https", Hostname: "new.example.com", Port: 8443, StatusCode: 301,
				Path: &model.PathModifier{IsPrefix: true, ReplacePrefix: "/new"}}}},
		},
		"redirect 308": {
			rules: []gatewayv1.HTTPRouteRule{withFilters(gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{{Path: pathMatch(gatewayv1.PathMatchExact, "/gone")}}},
				gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{StatusCode: ptr(308)}},
			)},
			want: []model.Route{{Name: "rule-0", Exact: "/gone", Redirect: &model.Redirect{StatusCode: 308}}},
		},
		"URL rewrite": {
			rules: []gatewayv1.HTTPRouteRule{withFilters(webRule(),
				gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
					Hostname: ptr(gatewayv1.PreciseHostname("internal.example.com")),
					Path:     &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr("/index.html")}}},
			)},
			want: []model.Route{{Name: "rule-0", Prefix: "/", Targets: toWeb(1), URLRewrite: &model.URLRewrite{Hostname: "internal.example.com", Path: &model.PathModifier{Full: "/index.html"}}}},
		},
		"mirrors: whole, percent and fraction": {
			rules: []gatewayv1.HTTPRouteRule{withFilters(webRule(),
				gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{BackendRef: backendRef("", "web2", 8080, nil).BackendObjectReference}},
				gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{BackendRef: backendRef("", "web2", 8080, nil).BackendObjectReference, Percent: ptr(int32(25))}},
				gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestMirror, RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{BackendRef: backendRef("", "web2", 8080, nil).BackendObjectReference, Fraction: &gatewayv1.Fraction{Numerator: 1, Denominator: ptr(int32(1000))}}},
			)},
			want: []model.Route{{Name: "rule-0", Prefix: "/", Targets: toWeb(1), Mirrors: []model.Mirror{{Upstream: "app.web2.8080"}, {Upstream: "app.web2.8080", Percent: 25}, {Upstream: "app.web2.8080", Percent: 1}}}},
		},
		"CORS filter": {
			rules: []gatewayv1.HTTPRouteRule{withFilters(webRule(),
				gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
					AllowOrigins: []gatewayv1.CORSOrigin{"https://App.example.com"}, AllowCredentials: ptr(true),
					AllowMethods: []gatewayv1.HTTPMethodWithWildcard{"GET", "POST"}, AllowHeaders: []gatewayv1.HTTPHeaderName{"x-a"},
					ExposeHeaders: []gatewayv1.HTTPHeaderName{"x-b"}, MaxAge: 600}},
			)},
			want: []model.Route{{Name: "rule-0", Prefix: "/", Targets: toWeb(1), CORS: &model.CORSPolicy{Origins: []string{"https://app.example.com"},
				Methods: []string{"GET", "POST"}, Headers: []string{"x-a"}, ExposeHeaders: []string{"x-b"}, Credentials: true, MaxAge: 10 * time.Minute}}},
		},
		"timeouts": {
			rules: []gatewayv1.HTTPRouteRule{
				func() gatewayv1.HTTPRouteRule {
					r := webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/req")})
					r.Timeouts = &gatewayv1.HTTPRouteTimeouts{Request: ptr(gatewayv1.Duration("10s")), BackendRequest: ptr(gatewayv1.Duration("2s"))}
					return r
				}(),
				func() gatewayv1.HTTPRouteRule {
					r := webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/be")})
					r.Timeouts = &gatewayv1.HTTPRouteTimeouts{BackendRequest: ptr(gatewayv1.Duration("500ms"))}
					return r
				}(),
				func() gatewayv1.HTTPRouteRule {
					r := webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/off")})
					r.Timeouts = &gatewayv1.HTTPRouteTimeouts{Request: ptr(gatewayv1.Duration("0s"))}
					return r
				}(),
			},
			want: []model.Route{
				{Name: "rule-0", Prefix: "/req", Targets: toWeb(1), Timeout: 10 * time.Second, BackendTimeout: 2 * time.Second},
				{Name: "rule-2", Prefix: "/off", Targets: toWeb(1), Timeout: -1},
				{Name: "rule-1", Prefix: "/be", Targets: toWeb(1), Timeout: 500 * time.Millisecond},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			in.Services = append(in.Services, testService("app", "web2", in.Services[0].Spec.Ports...))
			in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r", tc.rules...))
			res := Build(in)
			if len(res.Config.Services) != 1 {
				t.Fatalf("services %+v; want one", res.Config.Services)
			}
			got := res.Config.Services[0].Routes
			for i := range tc.want { // a PathPrefix matches whole segments
				tc.want[i].SegmentPrefix = tc.want[i].Prefix != ""
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("routes\n got %s\nwant %s", jsonOf(got), jsonOf(tc.want))
			}
		})
	}
}

func TestHTTPRouteService(t *testing.T) {
	in := world(t)
	hr := testHTTPRoute("r")
	hr.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", "http"), parentRef("infra", "gw", "https")}
	hr.Spec.Hostnames = []gatewayv1.Hostname{"shop.example.com"}
	in.HTTPRoutes = append(in.HTTPRoutes, hr)
	res := Build(in)
	want := model.Service{
		Name: "hr.app.r", Group: "edge", Origin: "app/r", Namespace: "app", Created: testNow.Add(-time.Hour),
		Hosts:     []string{"shop.example.com"},
		Listeners: []model.ListenerRef{{Gateway: "gw.infra.gw", Listener: "http-80"}, {Gateway: "gw.infra.gw", Listener: "https-443"}},
		Routes:    []model.Route{{Name: "rule-0", Prefix: "/", SegmentPrefix: true, Targets: toWeb(1)}},
		Upstreams: []model.Upstream{{Name: upWeb, Endpoints: []model.Endpoint{
			{Addr: netip.MustParseAddrPort("10.0.0.1:9090"), Weight: 1}, {Addr: netip.MustParseAddrPort("10.0.0.2:9090"), Weight: 1}}}},
		GatewayAPI: true,
	}
	if len(res.Config.Services) != 1 || !reflect.DeepEqual(res.Config.Services[0], want) {
		t.Fatalf("services\n got %s\nwant [%s]", jsonOf(res.Config.Services), jsonOf(want))
	}
}

func TestHTTPRouteServicePerHostSet(t *testing.T) {
	in := world(t)
	hr := testHTTPRoute("r")
	// On http (any host) the route serves every host; on https only
	// those under *.example.com: two services, one per host set.
	hr.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", "http"), parentRef("infra", "gw", "https")}
	in.HTTPRoutes = append(in.HTTPRoutes, hr)
	res := Build(in)
	if len(res.Config.Services) != 2 {
		t.Fatalf("services %s; want two", jsonOf(res.Config.Services))
	}
	a, b := res.Config.Services[0], res.Config.Services[1]
	if a.Name != "hr.app.r" || a.Hosts != nil || a.Listeners[0].Listener != "http-80" ||
		b.Name != "hr1.app.r" || !reflect.DeepEqual(b.Hosts, []string{"*.example.com"}) || b.Listeners[0].Listener != "https-443" {
		t.Fatalf("services %s; want hr.app.r on http-80 for any host and hr1.app.r on https-443 for *.example.com", jsonOf(res.Config.Services))
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	in := world(t)
	for _, n := range []string{"c", "a", "b"} {
		hr := testHTTPRoute(n)
		hr.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(n + ".example.com")}
		in.HTTPRoutes = append(in.HTTPRoutes, hr)
	}
	first := Build(in)
	in.HTTPRoutes[0], in.HTTPRoutes[2] = in.HTTPRoutes[2], in.HTTPRoutes[0]
	second := Build(in)
	if !reflect.DeepEqual(first, second) {
		t.Fatal("equal inputs in another order built another result")
	}
	var names []string
	for _, s := range first.Config.Services {
		names = append(names, s.Name)
	}
	if !reflect.DeepEqual(names, []string{"hr.app.a", "hr.app.b", "hr.app.c"}) {
		t.Fatalf("services %v; want sorted by name", names)
	}
}
