package gatewayapi

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/model"
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

// TestEquivalentHeaderMatchesKeepTheFirst: "foo" and "Foo" are one
// header; both used to be kept, so no request (one value per header)
// could match the rule. The spec (HTTPHeaderMatch.Name): "only the first
// entry with an equivalent name MUST be considered for a match".
func TestEquivalentHeaderMatchesKeepTheFirst(t *testing.T) {
	in := world(t)
	in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r", gatewayv1.HTTPRouteRule{
		Matches: []gatewayv1.HTTPRouteMatch{{
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-Env", Value: "prod"}, {Name: "x-env", Value: "dev"}},
			QueryParams: []gatewayv1.HTTPQueryParamMatch{
				{Name: "v", Value: "1"}, {Name: "v", Value: "2"}, {Name: "V", Value: "3"},
			},
		}},
		BackendRefs: httpBackends(backendRef("", "web", 8080, nil)),
	}))
	res := Build(in)
	r := res.Config.Services[0].Routes[0]
	if len(r.Headers) != 1 || r.Headers[0] != (model.HeaderMatch{Name: "x-env", Exact: "prod"}) {
		t.Errorf("headers %+v; want x-env: prod alone", r.Headers)
	}
	// Query parameter names are case-sensitive: "V" is another one.
	if len(r.Queries) != 2 || r.Queries[0].Exact != "1" || r.Queries[1].Name != "V" {
		t.Errorf("queries %+v; want v=1 and V=3", r.Queries)
	}
}

// TestGRPCInvalidBackendsAreUnavailable: a GRPCRoute's share of invalid
// backends was answered 500, which gRPC clients read as UNKNOWN; the spec
// (GRPCRouteRule.BackendRefs) asks for UNAVAILABLE: 503.
func TestGRPCInvalidBackendsAreUnavailable(t *testing.T) {
	in := world(t)
	rule := func(name string, refs ...gatewayv1.BackendRef) gatewayv1.GRPCRouteRule {
		r := gatewayv1.GRPCRouteRule{Name: ptr(gatewayv1.SectionName(name)),
			Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: ptr(name)}}}}
		for _, ref := range refs {
			r.BackendRefs = append(r.BackendRefs, gatewayv1.GRPCBackendRef{BackendRef: ref})
		}
		return r
	}
	in.GRPCRoutes = append(in.GRPCRoutes, &gatewayv1.GRPCRoute{ObjectMeta: meta("app", "g"), Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "http")}},
		Rules: []gatewayv1.GRPCRouteRule{
			rule("half", backendRef("", "web", 8080, nil), backendRef("", "nope", 8080, nil)),
			rule("none", backendRef("", "nope", 8080, nil)),
		},
	}})
	res := Build(in)
	wantCond(t, res.Status.GRPCRoutes[nn("app", "g")].Parents[0].Conditions, "ResolvedRefs", false, string(gatewayv1.RouteReasonBackendNotFound))
	routes := map[string]model.Route{}
	for _, r := range res.Config.Services[0].Routes {
		routes[r.Name] = r
	}
	if h := routes["half"]; h.FailedWeight != 1 || h.FailedStatus != 503 || len(h.Targets) != 1 {
		t.Errorf("half: %s; want one target and a failed weight of 1 answered 503", jsonOf(h))
	}
	if d := model.DirectResponseOf(routes["none"]); d == nil || d.Status != 503 {
		t.Errorf("none: direct response %+v; want 503", d)
	}
	if r := model.Resolve(res.Config, model.Options{}); len(r.Problems) > 0 {
		t.Fatalf("the model refuses the routes: %v", r.Problems)
	}
}

// TestTLSRouteInvalidShareIsRejected: the share of a TLSRoute's invalid
// backends went to the valid ones; the spec (TLSRouteRule.BackendRefs):
// "if an invalid backend is requested to have 80% of requests, then 80%
// of requests must be rejected instead". That share goes to an upstream
// without endpoints (Envoy closes its connections).
func TestTLSRouteInvalidShareIsRejected(t *testing.T) {
	in := world(t)
	in.TLSRoutes = append(in.TLSRoutes, testTLSRoute("t", []gatewayv1.Hostname{"db.example.com"},
		backendRef("", "web", 8080, ptr(int32(20))), backendRef("", "nope", 8080, ptr(int32(80)))))
	res := Build(in)
	wantCond(t, res.Status.TLSRoutes[nn("app", "t")].Parents[0].Conditions, "ResolvedRefs", false, string(gatewayv1.RouteReasonBackendNotFound))
	var got []model.SNITarget
	for _, l := range res.Config.Gateways[0].Listeners {
		got = append(got, l.Passthrough...)
	}
	want := []model.WeightedCluster{{Cluster: "tr.app.t/app.web.8080", Weight: 20}, {Cluster: "tr.app.t/invalid-backends", Weight: 80}}
	if len(got) != 1 || !slices.Equal(got[0].Targets, want) {
		t.Fatalf("passthrough %s; want %s", jsonOf(got), jsonOf(want))
	}
	r := model.Resolve(res.Config, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("the model refuses the rejecting upstream: %v", r.Problems)
	}
	for _, s := range res.Config.Services {
		for _, u := range s.Upstreams {
			if u.Name == "invalid-backends" && len(u.Endpoints) != 0 {
				t.Fatalf("the rejecting upstream has endpoints %v", u.Endpoints)
			}
		}
	}
}

// TestPolicyConflictsStayInTheirNamespace: two TrafficPolicies of
// different namespaces, each targeting its own namespace's route "r",
// used to conflict (the older won, the other was Conflicted): targets are
// local to the policy's namespace.
func TestPolicyConflictsStayInTheirNamespace(t *testing.T) {
	in := policyWorld(t)
	other := testHTTPRoute("r")
	other.Namespace = "team"
	in.HTTPRoutes = append(in.HTTPRoutes, other)
	in.Namespaces = append(in.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}})
	in.TrafficPolicies = []*tlbv1alpha1.TrafficPolicy{
		trafficPolicy("app", "p", time.Hour, tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""), CORS: cors("https://app.example.com")}),
		trafficPolicy("team", "p", time.Minute, tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""), CORS: cors("https://team.example.com")}),
	}
	res := Build(in)
	for _, ns := range []string{"app", "team"} {
		if c := policyStatus(t, res, ns, "p"); c.Status != metav1.ConditionTrue {
			t.Errorf("%s/p: %s/%s (%s); want accepted", ns, c.Status, c.Reason, c.Message)
		}
	}
}

// TestPolicyAncestorIsTheGateway: a policy on a route reported the route
// as its ancestor; the spec (PolicyAncestorStatus) recommends the Gateway:
// one entry per Gateway of ours the route attaches to, one for two rules
// of one route.
func TestPolicyAncestorIsTheGateway(t *testing.T) {
	in := policyWorld(t)
	two := append(target("HTTPRoute", "r", "api"), target("HTTPRoute", "r", "web")...)
	in.TrafficPolicies = []*tlbv1alpha1.TrafficPolicy{
		trafficPolicy("app", "p", time.Hour, tlbv1alpha1.TrafficPolicySpec{TargetRefs: two, CORS: cors("https://app.example.com")}),
		trafficPolicy("app", "lost", time.Hour, tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "nope", ""), CORS: cors("https://app.example.com")}),
	}
	res := Build(in)
	anc := res.Status.TrafficPolicies[nn("app", "p")].Ancestors
	if len(anc) != 1 {
		t.Fatalf("ancestors %+v; want one, the Gateway", anc)
	}
	ref := anc[0].AncestorRef
	if ptrStr(ref.Kind) != "Gateway" || ptrStr(ref.Group) != gatewayv1.GroupName || ptrStr(ref.Namespace) != "infra" || ref.Name != "gw" || ref.SectionName != nil {
		t.Errorf("ancestorRef %s/%s %s/%s section %v; want Gateway infra/gw", ptrStr(ref.Group), ptrStr(ref.Kind), ptrStr(ref.Namespace), ref.Name, ref.SectionName)
	}
	wantCond(t, anc[0].Conditions, "Accepted", true, string(gatewayv1.PolicyReasonAccepted))
	// A target that is not found has no Gateway: it stands for itself.
	lost := res.Status.TrafficPolicies[nn("app", "lost")].Ancestors
	if len(lost) != 1 || ptrStr(lost[0].AncestorRef.Kind) != "HTTPRoute" || lost[0].AncestorRef.Name != "nope" {
		t.Fatalf("lost ancestors %+v; want the HTTPRoute it names", lost)
	}
	wantCond(t, lost[0].Conditions, "Accepted", false, string(gatewayv1.PolicyReasonTargetNotFound))
}

// TestListenerServesItsValidRouteKinds: a listener allowing HTTPRoute and
// an unsupported kind reported its HTTPRoutes Accepted and served none.
// It serves them now (ResolvedRefs stays False, InvalidRouteKinds).
func TestListenerServesItsValidRouteKinds(t *testing.T) {
	in := world(t)
	l := allNamespaces(httpListener("http", 80, ""))
	l.AllowedRoutes.Kinds = []gatewayv1.RouteGroupKind{{Kind: "HTTPRoute"}, {Kind: "TCPRoute"}}
	in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{l}
	in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r"))
	res := Build(in)
	wantCond(t, res.Status.HTTPRoutes[nn("app", "r")].Parents[0].Conditions, "Accepted", true, string(gatewayv1.RouteReasonAccepted))
	if len(res.Config.Services) != 1 || len(res.Config.Services[0].Listeners) != 1 {
		t.Fatalf("services %s; want the route served on http-80", jsonOf(res.Config.Services))
	}
	ls := res.Status.Gateways[gwKey].Listeners[0]
	wantCond(t, ls.Conditions, "ResolvedRefs", false, string(gatewayv1.ListenerReasonInvalidRouteKinds))
	wantCond(t, ls.Conditions, "Programmed", true, string(gatewayv1.ListenerReasonProgrammed))
	if ls.AttachedRoutes != 1 {
		t.Errorf("attachedRoutes %d; want 1", ls.AttachedRoutes)
	}
}

// TestRouteHostsOutsideTheCertificate: an HTTPS listener serves its
// certificate for every name its hostname matches, but a client accepts
// it only for the names it covers, and a listener without hostname served
// its certificate for the names in it alone: a route's other name had no
// TLS chain at all while the route was Accepted. Attachment stays as the
// spec defines it (allowedRoutes and parentRefs alone; the conformance
// suite's certificates cover none of its hostnames): the route is
// accepted, its names are served, and its message names those outside
// the certificate (a "*.example.com" certificate covers one label).
func TestRouteHostsOutsideTheCertificate(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Listeners = append(in.Gateways[0].Spec.Listeners,
		allNamespaces(httpsListener("shop", 8443, "", secretRef("", "shop"))))
	in.Gateways[0].Spec.Listeners[2].Port = 9443 // the tls listener, out of the way
	in.Secrets = append(in.Secrets, tlsSecret(t, "infra", "shop", "shop.example.com"))
	route := func(name, section string, hosts ...gatewayv1.Hostname) *gatewayv1.HTTPRoute {
		r := testHTTPRoute(name)
		r.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", section)}
		r.Spec.Hostnames = hosts
		return r
	}
	in.HTTPRoutes = append(in.HTTPRoutes,
		route("deep", "https", "a.b.example.com"),
		route("other", "shop", "other.example.org"),
		route("shop", "shop", "shop.example.com"),
	)
	res := Build(in)
	msgs := map[string]string{
		"deep":  "accepted; outside the listener's certificate (clients that verify it fail the handshake): a.b.example.com (listener https)",
		"other": "accepted; outside the listener's certificate (clients that verify it fail the handshake): other.example.org (listener shop)",
		"shop":  "accepted",
	}
	for name, msg := range msgs {
		c := cond(t, res.Status.HTTPRoutes[nn("app", name)].Parents[0].Conditions, "Accepted")
		if c.Status != metav1.ConditionTrue || c.Message != msg {
			t.Errorf("%s: Accepted %s (%s); want True (%s)", name, c.Status, c.Message, msg)
		}
	}
	var names []string
	for _, l := range res.Config.Gateways[0].Listeners {
		if l.Port == 8443 {
			for _, c := range l.TLS {
				names = append(names, c.ServerNames...)
			}
		}
	}
	if !slices.Equal(names, []string{"shop.example.com", "other.example.org"}) {
		t.Errorf("server names on 8443 %v; want the certificate's and the route's", names)
	}
}

func TestCertificateCovers(t *testing.T) {
	for _, tc := range []struct {
		sans []string
		host string
		want bool
	}{
		{[]string{"*.example.com"}, "a.example.com", true},
		{[]string{"*.example.com"}, "a.b.example.com", false},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"*.example.com"}, "*.example.com", true},
		{[]string{"a.example.com"}, "*.example.com", true}, // some of its names are served
		{[]string{"a.example.com"}, "*.b.example.com", false},
		{[]string{"Shop.Example.com"}, "shop.example.com", true},
		{[]string{"*.org", "*.wildcard.org"}, "secure.test.com", false}, // the conformance suite's
	} {
		if got := covers(tc.sans, tc.host); got != tc.want {
			t.Errorf("covers(%v, %s) = %v; want %v", tc.sans, tc.host, got, tc.want)
		}
	}
}

// TestFurtherCertificatesReported: a listener's certificateRefs after the
// first were checked and silently not served; its Accepted condition now
// says which are not (one for the same names as an earlier one: the
// model serves one certificate per server name).
func TestFurtherCertificatesReported(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Listeners[1].TLS.CertificateRefs = append(in.Gateways[0].Spec.Listeners[1].TLS.CertificateRefs, secretRef("", "rsa"))
	in.Secrets = append(in.Secrets, tlsSecret(t, "infra", "rsa", "*.example.com"))
	res := Build(in)
	ls := res.Status.Gateways[gwKey].Listeners[1]
	wantCond(t, ls.Conditions, "Accepted", true, string(gatewayv1.ListenerReasonAccepted))
	if msg := cond(t, ls.Conditions, "Accepted").Message; msg != "accepted; spec.listeners[1].tls.certificateRefs[1] are not served: they name no server name an earlier certificate does not (one certificate per name, chosen by SNI)" {
		t.Errorf("Accepted message %q; want the certificates not served named", msg)
	}
	for _, c := range res.Config.Certificates {
		if c.Name == "cert.infra.rsa" {
			t.Errorf("certificate %s in the model; only the first is served", c.Name)
		}
	}
}
