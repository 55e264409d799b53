package translate_test

import (
	"slices"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestGRPCRoutePrecedenceAcrossRoutes: routes of several GRPCRoutes on
// one host go in the spec's order (GRPCRouteRule.Matches: characters of
// the service, then of the method), whatever their path's kind and
// length: a method-only match (a regex longer than the service's prefix)
// used to outrank a service-only one.
func TestGRPCRoutePrecedenceAcrossRoutes(t *testing.T) {
	older := gwAPIService("a", "older", 1, []model.Route{
		{Name: "watch", Regex: "/[^/]+/Watch", Precedence: model.GRPCPrecedence("", "Watch")},
		{Name: "any", Prefix: "/"},
	}, "a")
	younger := gwAPIService("a", "younger", 2, []model.Route{
		{Name: "cart", Prefix: "/shop.Cart/", Precedence: model.GRPCPrecedence("shop.Cart", "")},
		{Name: "add", Exact: "/shop.Cart/Add", Precedence: model.GRPCPrecedence("shop.Cart", "Add")},
	}, "a")
	r := gwAPIResolve(t, older, younger)
	got := routeNames(translate.ListenerRoutes(r, "g"), "http-203.0.113.50-80")
	want := []string{"*: hr.a.younger/add hr.a.younger/cart hr.a.older/watch hr.a.older/any"}
	if !slices.Equal(got, want) {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}

// TestGRPCRouteFailedShareIsUnavailable: the share of a GRPCRoute's
// invalid backends (FailedStatus 503) is answered 503, which gRPC
// clients read as UNAVAILABLE; an HTTPRoute's stays 500.
func TestGRPCRouteFailedShareIsUnavailable(t *testing.T) {
	svc := gwAPIService("a", "g", 1, []model.Route{
		{Name: "grpc", Prefix: "/shop.Cart/", FailedWeight: 1, FailedStatus: 503},
		{Name: "http", Prefix: "/", FailedWeight: 1},
	}, "a")
	r := gwAPIResolve(t, svc)
	codes := map[string]route.RouteAction_ClusterNotFoundResponseCode{}
	for _, rc := range translate.ListenerRoutes(r, "g") {
		for _, vh := range rc.GetVirtualHosts() {
			for _, rt := range vh.GetRoutes() {
				codes[rt.GetName()] = rt.GetRoute().GetClusterNotFoundResponseCode()
				if n := len(rt.GetRoute().GetWeightedClusters().GetClusters()); n != 2 {
					t.Errorf("%s: %d weighted clusters; want the target and %s", rt.GetName(), n, model.FailedBackendCluster)
				}
			}
		}
	}
	if codes["hr.a.g/grpc"] != route.RouteAction_SERVICE_UNAVAILABLE || codes["hr.a.g/http"] != route.RouteAction_INTERNAL_SERVER_ERROR {
		t.Errorf("cluster_not_found codes %v; want grpc 503 (UNAVAILABLE), http 500", codes)
	}
}
