package gatewayapi

import (
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The tests of this file each hold one behaviour the spec asks for that
// a review of Build against the spec found missing (issue 24).

// modelListeners returns the names of the model listeners of the test
// Gateway, none when it is not served.
func modelListeners(res Result) []string {
	var out []string
	for _, g := range res.Config.Gateways {
		for _, l := range g.Listeners {
			out = append(out, l.Name)
		}
	}
	return out
}

// TestConflictedListenersNotServed: the first of two indistinct listeners
// kept serving; the spec: "ALL indistinct Listeners must not be accepted
// for processing".
func TestConflictedListenersNotServed(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{
		allNamespaces(httpListener("http", 80, "")),
		allNamespaces(httpListener("a", 8080, "a.example.com")),
		allNamespaces(httpListener("b", 8080, "a.example.com")),
	}
	in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r"))
	in.HTTPRoutes[0].Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", "a")}
	res := Build(in)
	if got := modelListeners(res); len(got) != 1 || got[0] != "http-80" {
		t.Fatalf("model listeners %v; want only http-80", got)
	}
	st := res.Status.Gateways[gwKey]
	wantCond(t, st.Conditions, "Accepted", true, string(gatewayv1.GatewayReasonListenersNotValid))
	if msg := cond(t, st.Conditions, "Accepted").Message; msg != "listeners not accepted: a (HostnameConflict), b (HostnameConflict); accepted: http" {
		t.Errorf("Accepted message %q; want the conflicted and the accepted listeners named", msg)
	}
	rs := res.Status.HTTPRoutes[nn("app", "r")]
	wantCond(t, rs.Parents[0].Conditions, "Accepted", false, string(gatewayv1.RouteReasonNotAllowedByListeners))
}
