package gatewayapi

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// HTTPRouteBackendRequestHeaderModifier and
// HTTPRouteRequestHeaderModifierBackendWeights: a backendRef's header
// filters become its target's header edits, each backend its own; other
// filter types there are refused by name. Filters per backend used to
// reject the whole route.
func TestBackendRefHeaderFilters(t *testing.T) {
	in := world(t)
	in.Services = append(in.Services, testService("app", "v2", corev1.ServicePort{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}))
	set := func(name, value string) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: gatewayv1.HTTPHeaderName(name), Value: value}}}}
	}
	backends := httpBackends(backendRef("", "web", 8080, ptr(int32(10))), backendRef("", "v2", 8080, ptr(int32(10))))
	backends[0].Filters = []gatewayv1.HTTPRouteFilter{set("Backend", "web"), {Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier,
		ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Remove: []string{"X-Internal"}}}}
	backends[1].Filters = []gatewayv1.HTTPRouteFilter{set("Backend", "v2")}
	in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: backends}))
	res := Build(in)
	wantCond(t, res.Status.HTTPRoutes[nn("app", "r")].Parents[0].Conditions, "Accepted", true, "Accepted")
	var ts []model.WeightedTarget
	for _, s := range res.Config.Services {
		if s.Name == "hr.app.r" {
			ts = s.Routes[0].Targets
		}
	}
	if len(ts) != 2 || ts[0].Headers == nil || ts[1].Headers == nil ||
		ts[0].Headers.Request.Set["backend"] != "web" || ts[1].Headers.Request.Set["backend"] != "v2" ||
		len(ts[0].Headers.Response.Remove) != 1 || ts[0].Headers.Response.Remove[0] != "x-internal" || ts[1].Headers.Response.Remove != nil {
		t.Fatalf("targets %s; want each backend's own edits", jsonOf(ts))
	}
	if ps := model.Resolve(res.Config, model.Options{}).Problems; len(ps) > 0 {
		t.Fatalf("problems: %s", jsonOf(ps))
	}

	in = world(t)
	backends = httpBackends(backendRef("", "web", 8080, nil))
	backends[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{Hostname: ptr(gatewayv1.PreciseHostname("x.example.com"))}}}
	in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r", gatewayv1.HTTPRouteRule{BackendRefs: backends}))
	c := cond(t, Build(in).Status.HTTPRoutes[nn("app", "r")].Parents[0].Conditions, "Accepted")
	if c.Status != "False" || c.Reason != "UnsupportedValue" || !strings.Contains(c.Message, "spec.rules[0].backendRefs[0].filters[0].type") {
		t.Fatalf("URLRewrite on a backend: Accepted %s/%s %q; want False/UnsupportedValue naming the field", c.Status, c.Reason, c.Message)
	}
}

// A GRPCRoute backendRef's header filters are its target's edits too.
func TestGRPCBackendRefHeaderFilters(t *testing.T) {
	in := world(t)
	in.GRPCRoutes = append(in.GRPCRoutes, &gatewayv1.GRPCRoute{ObjectMeta: meta("app", "g"), Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "http")}},
		Rules: []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{
			BackendRef: backendRef("", "web", 8080, nil),
			Filters: []gatewayv1.GRPCRouteFilter{{Type: gatewayv1.GRPCRouteFilterResponseHeaderModifier,
				ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Add: []gatewayv1.HTTPHeader{{Name: "X-Backend", Value: "web"}}}}},
		}}}},
	}})
	res := Build(in)
	wantCond(t, res.Status.GRPCRoutes[nn("app", "g")].Parents[0].Conditions, "Accepted", true, "Accepted")
	ts := res.Config.Services[0].Routes[0].Targets
	if len(ts) != 1 || ts[0].Headers == nil || ts[0].Headers.Response.Add["x-backend"] != "web" {
		t.Fatalf("targets %s; want web with its response edit", jsonOf(ts))
	}
}
