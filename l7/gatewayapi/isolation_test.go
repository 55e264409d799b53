package gatewayapi

import (
	"reflect"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestListenerIsolation: the suite's GatewayHTTPListenerIsolation with
// hostname intersection. Each route names bar.com, *.example.com and
// *.foo.example.com; on each listener it serves only the hosts no more
// specific listener of the port takes, and one left with none serves
// nothing while it stays attached.
func TestListenerIsolation(t *testing.T) {
	in := world(t)
	in.Gateways = []*gatewayv1.Gateway{testGateway("infra", "gw",
		allNamespaces(httpListener("empty", 80, "")),
		allNamespaces(httpListener("wex", 80, "*.example.com")),
		allNamespaces(httpListener("wfoo", 80, "*.foo.example.com")),
		allNamespaces(httpListener("abc", 80, "abc.foo.example.com")))}
	for _, l := range []string{"empty", "wex", "wfoo", "abc"} {
		r := testHTTPRoute(l)
		r.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", l)}
		r.Spec.Hostnames = []gatewayv1.Hostname{"bar.com", "*.example.com", "*.foo.example.com"}
		in.HTTPRoutes = append(in.HTTPRoutes, r)
	}
	in.HTTPRoutes = append(in.HTTPRoutes, func() *gatewayv1.HTTPRoute {
		r := testHTTPRoute("taken")
		r.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", "empty")}
		r.Spec.Hostnames = []gatewayv1.Hostname{"*.foo.example.com"}
		return r
	}())
	res := Build(in)
	got := map[string][]string{}
	for _, s := range res.Config.Services {
		got[s.Name] = s.Hosts
	}
	want := map[string][]string{
		"hr.app.empty": {"bar.com"},
		"hr.app.wex":   {"*.example.com"},
		"hr.app.wfoo":  {"*.foo.example.com"},
		"hr.app.abc":   {"abc.foo.example.com"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("services' hosts %v, want %v", got, want)
	}
	var attached int32
	for _, l := range res.Status.Gateways[gwKey].Listeners {
		if l.Name == "empty" {
			attached = l.AttachedRoutes
		}
	}
	if attached != 2 {
		t.Errorf("listener empty has %d attached routes, want 2 (the one serving nothing counts)", attached)
	}
	c := cond(t, res.Status.HTTPRoutes[nn("app", "taken")].Parents[0].Conditions, "Accepted")
	if c.Status != "True" {
		t.Errorf("route taken: Accepted %s %q, want True", c.Status, c.Message)
	}
}
