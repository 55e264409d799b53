package gatewayapi

import (
	"reflect"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

func TestGRPCRouteTranslation(t *testing.T) {
	regex := gatewayv1.GRPCMethodMatchRegularExpression
	method := func(typ *gatewayv1.GRPCMethodMatchType, svc, m string) gatewayv1.GRPCRouteMatch {
		mm := &gatewayv1.GRPCMethodMatch{Type: typ}
		if svc != "" {
			mm.Service = ptr(svc)
		}
		if m != "" {
			mm.Method = ptr(m)
		}
		return gatewayv1.GRPCRouteMatch{Method: mm}
	}
	in := world(t)
	gr := &gatewayv1.GRPCRoute{ObjectMeta: meta("app", "g"), Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "http")}},
		Rules: []gatewayv1.GRPCRouteRule{{
			Matches: []gatewayv1.GRPCRouteMatch{
				method(nil, "shop.Cart", "Add"),
				method(nil, "shop.Cart", ""),
				method(nil, "", "Watch"),
				method(&regex, "shop\\..*", ""),
				{Headers: []gatewayv1.GRPCHeaderMatch{{Name: "X-Tenant", Value: "a"}, {Name: "x-tenant", Value: "b"}}},
				method(&regex, "", "Get|List"),
			},
			Filters: []gatewayv1.GRPCRouteFilter{{Type: gatewayv1.GRPCRouteFilterRequestHeaderModifier,
				RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Via", Value: "tlb"}}}}},
			BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backendRef("", "web", 8080, nil)}},
		}},
	}}
	in.GRPCRoutes = append(in.GRPCRoutes, gr)
	res := Build(in)
	wantCond(t, res.Status.GRPCRoutes[nn("app", "g")].Parents[0].Conditions, "Accepted", true, "Accepted")
	if len(res.Config.Services) != 1 {
		t.Fatalf("services %s; want one", jsonOf(res.Config.Services))
	}
	s := res.Config.Services[0]
	if s.Name != "gr.app.g" || len(s.Upstreams) != 1 || !s.Upstreams[0].HTTP2 {
		t.Fatalf("service %s; want gr.app.g with one HTTP/2 upstream", jsonOf(s))
	}
	hdr := &model.RouteResponses{Headers: &model.HeaderRules{Request: model.HeaderEdits{Set: map[string]string{"x-via": "tlb"}}}}
	// The spec's order (GRPCRouteRule.Matches): characters of the
	// service, then of the method; a method-only match used to outrank a
	// service-only one. Regular expressions are grouped per field: "a|b"
	// used to split the whole path.
	want := []model.Route{
		{Name: "rule-0-0", Exact: "/shop.Cart/Add", Precedence: model.GRPCPrecedence("shop.Cart", "Add")},
		{Name: "rule-0-1", Prefix: "/shop.Cart/", Precedence: model.GRPCPrecedence("shop.Cart", "")},
		{Name: "rule-0-3", Regex: "/(?:shop\\..*)/(?:[^/]+)", Precedence: model.GRPCPrecedence("shop\\..*", "")},
		{Name: "rule-0-5", Regex: "/(?:[^/]+)/(?:Get|List)", Precedence: model.GRPCPrecedence("", "Get|List")},
		{Name: "rule-0-2", Regex: "/[^/]+/Watch", Precedence: model.GRPCPrecedence("", "Watch")},
		{Name: "rule-0-4", Prefix: "/", Headers: []model.HeaderMatch{{Name: "x-tenant", Exact: "a"}}},
	}
	for i := range want {
		want[i].Targets, want[i].Responses = toWeb(1), hdr
	}
	if !reflect.DeepEqual(s.Routes, want) {
		t.Fatalf("routes\n got %s\nwant %s", jsonOf(s.Routes), jsonOf(want))
	}
}

func TestGRPCRouteOnTLSListenerIsNotAllowed(t *testing.T) {
	in := world(t)
	in.GRPCRoutes = append(in.GRPCRoutes, &gatewayv1.GRPCRoute{ObjectMeta: meta("app", "g"), Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "tls")}},
	}})
	res := Build(in)
	wantCond(t, res.Status.GRPCRoutes[nn("app", "g")].Parents[0].Conditions, "Accepted", false, "NotAllowedByListeners")
}

func testTLSRoute(name string, hostnames []gatewayv1.Hostname, refs ...gatewayv1.BackendRef) *gatewayv1.TLSRoute {
	return &gatewayv1.TLSRoute{ObjectMeta: meta("app", name), Spec: gatewayv1.TLSRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "tls")}},
		Hostnames:       hostnames,
		Rules:           []gatewayv1.TLSRouteRule{{BackendRefs: refs}},
	}}
}

func TestTLSRoutePassthrough(t *testing.T) {
	in := world(t)
	in.Services = append(in.Services, testService("app", "db", in.Services[0].Spec.Ports...))
	in.TLSRoutes = append(in.TLSRoutes,
		testTLSRoute("t", []gatewayv1.Hostname{"db.example.com"}, backendRef("", "db", 8080, ptr(int32(3))), backendRef("", "web", 8080, nil)),
		testTLSRoute("missing", []gatewayv1.Hostname{"x.example.com"}, backendRef("", "nope", 8080, nil)),
	)
	res := Build(in)
	wantCond(t, res.Status.TLSRoutes[nn("app", "t")].Parents[0].Conditions, "Accepted", true, "Accepted")
	wantCond(t, res.Status.TLSRoutes[nn("app", "t")].Parents[0].Conditions, "ResolvedRefs", true, "ResolvedRefs")
	wantCond(t, res.Status.TLSRoutes[nn("app", "missing")].Parents[0].Conditions, "ResolvedRefs", false, "BackendNotFound")
	var tls model.Listener
	for _, l := range res.Config.Gateways[0].Listeners {
		if l.Name == "tls-8443" {
			tls = l
		}
	}
	// A route whose backends are all invalid rejects its connections:
	// its names go to an upstream without endpoints.
	want := []model.SNITarget{
		{ServerNames: []string{"x.example.com"}, Targets: []model.WeightedCluster{{Cluster: "tr.app.missing/invalid-backends", Weight: 1}}},
		{ServerNames: []string{"db.example.com"}, Targets: []model.WeightedCluster{
			{Cluster: "tr.app.t/app.db.8080", Weight: 3}, {Cluster: "tr.app.t/app.web.8080", Weight: 1}}},
	}
	if !reflect.DeepEqual(tls.Passthrough, want) {
		t.Fatalf("passthrough %s; want %s", jsonOf(tls.Passthrough), jsonOf(want))
	}
	if len(res.Config.Services) != 2 || res.Config.Services[1].Name != "tr.app.t" || len(res.Config.Services[1].Listeners) != 0 ||
		!reflect.DeepEqual(res.Config.Services[1].Hosts, []string{"db.example.com"}) || len(res.Config.Services[1].Upstreams) != 2 {
		t.Fatalf("services %s; want tr.app.t holding the two clusters, on no listener", jsonOf(res.Config.Services))
	}
}

func TestTLSRouteHostnameMustMatchListener(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Listeners[2].Hostname = ptr(gatewayv1.Hostname("*.db.example.com"))
	in.TLSRoutes = append(in.TLSRoutes, testTLSRoute("t", []gatewayv1.Hostname{"web.example.com"}, backendRef("", "web", 8080, nil)))
	res := Build(in)
	wantCond(t, res.Status.TLSRoutes[nn("app", "t")].Parents[0].Conditions, "Accepted", false, "NoMatchingListenerHostname")
	for _, l := range res.Config.Gateways[0].Listeners {
		if len(l.Passthrough) > 0 {
			t.Fatalf("listener %s forwards %s; want nothing", l.Name, jsonOf(l.Passthrough))
		}
	}
}

func TestTLSRouteOldestClaimsAServerName(t *testing.T) {
	in := world(t)
	old := testTLSRoute("old", []gatewayv1.Hostname{"db.example.com"}, backendRef("", "web", 8080, nil))
	old.CreationTimestamp.Time = testNow.Add(-2 * 3600e9)
	young := testTLSRoute("young", []gatewayv1.Hostname{"db.example.com", "db2.example.com"}, backendRef("", "web", 8080, nil))
	in.TLSRoutes = append(in.TLSRoutes, young, old)
	res := Build(in)
	var got []model.SNITarget
	for _, l := range res.Config.Gateways[0].Listeners {
		if l.Name == "tls-8443" {
			got = l.Passthrough
		}
	}
	want := []model.SNITarget{
		{ServerNames: []string{"db.example.com"}, Targets: []model.WeightedCluster{{Cluster: "tr.app.old/app.web.8080", Weight: 1}}},
		{ServerNames: []string{"db2.example.com"}, Targets: []model.WeightedCluster{{Cluster: "tr.app.young/app.web.8080", Weight: 1}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("passthrough %s; want %s", jsonOf(got), jsonOf(want))
	}
}
