package gatewayapi

import (
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// TestModelPassesModelChecks: what Build produces is served by l7 serve
// as is: model.Resolve (the checks l7 serve runs) finds no problem and
// keeps every gateway and service.
func TestModelPassesModelChecks(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Listeners = in.Gateways[0].Spec.Listeners[:2] // HTTP and HTTPS
	shop := testHTTPRoute("shop",
		webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/api"),
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-Env", Value: "canary"}}}),
		withFilters(webRule(), gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier,
			ResponseHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Served-By", Value: "tlb"}}}}),
		gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/gone")}}},
	)
	shop.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", "https")}
	shop.Spec.Hostnames = []gatewayv1.Hostname{"shop.example.com"}
	blog := testHTTPRoute("blog")
	blog.Spec.Hostnames = []gatewayv1.Hostname{"blog.example.com"}
	in.HTTPRoutes = append(in.HTTPRoutes, shop, blog)
	cfg := Build(in).Config
	if len(cfg.Gateways) != 1 || len(cfg.Services) != 2 || len(cfg.Certificates) != 1 {
		t.Fatalf("model: %d gateways, %d services, %d certificates; want 1, 2, 1", len(cfg.Gateways), len(cfg.Services), len(cfg.Certificates))
	}
	r := model.Resolve(cfg, model.Options{})
	for _, p := range r.Problems {
		t.Errorf("model problem: %v", p)
	}
	if len(r.Config.Gateways) != 1 || len(r.Config.Services) != 2 {
		t.Fatalf("resolved %d gateways and %d services; want all", len(r.Config.Gateways), len(r.Config.Services))
	}
	served := 0
	for _, l := range r.Listeners {
		served += len(l.Services)
	}
	if served != 2 {
		t.Fatalf("listeners %+v; want each service served on its listener", r.Listeners)
	}
}
