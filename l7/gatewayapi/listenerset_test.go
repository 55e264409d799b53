package gatewayapi

import (
	"net/netip"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// The expectations below are the conformance suite's ListenerSet tests
// (conformance/tests/listenerset-*.go), fed their own manifests.

const infraNS = "gateway-conformance-infra"

func setStatus(t *testing.T, res Result, ns, name string) gatewayv1.ListenerSetStatus {
	t.Helper()
	st, ok := res.Status.ListenerSets[types.NamespacedName{Namespace: ns, Name: name}]
	if !ok {
		t.Fatalf("no status for ListenerSet %s/%s", ns, name)
	}
	return st
}

// wantSet checks a set's Accepted and Programmed conditions.
func wantSet(t *testing.T, res Result, ns, name string, ok bool, acceptedReason, programmedReason string) {
	t.Helper()
	st := setStatus(t, res, ns, name)
	if acceptedReason != "" {
		wantCond(t, st.Conditions, "Accepted", ok, acceptedReason)
	} else if c := cond(t, st.Conditions, "Accepted"); (c.Status == metav1.ConditionTrue) != ok {
		t.Fatalf("%s/%s Accepted = %s (%s); want %v", ns, name, c.Status, c.Message, ok)
	}
	wantCond(t, st.Conditions, "Programmed", ok, programmedReason)
}

func setListener(t *testing.T, res Result, ns, set, listener string) gatewayv1.ListenerEntryStatus {
	t.Helper()
	for _, l := range setStatus(t, res, ns, set).Listeners {
		if string(l.Name) == listener {
			return l
		}
	}
	t.Fatalf("ListenerSet %s/%s has no listener %s", ns, set, listener)
	return gatewayv1.ListenerEntryStatus{}
}

// wantListenerOK checks the suite's generateAcceptedListenerConditions.
func wantListenerOK(t *testing.T, cs []metav1.Condition) {
	t.Helper()
	for _, typ := range []string{"Accepted", "Programmed", "ResolvedRefs"} {
		if c := cond(t, cs, typ); c.Status != metav1.ConditionTrue {
			t.Fatalf("listener condition %s = %s/%s (%s); want True", typ, c.Status, c.Reason, c.Message)
		}
	}
}

// wantConflicted checks a conflicted listener as the suite does.
func wantConflicted(t *testing.T, cs []metav1.Condition, reason gatewayv1.ListenerConditionReason) {
	t.Helper()
	wantCond(t, cs, "Accepted", false, string(reason))
	wantCond(t, cs, "Programmed", false, string(reason))
	wantCond(t, cs, "Conflicted", true, string(reason))
}

func gwListener(t *testing.T, res Result, ns, gw, listener string) gatewayv1.ListenerStatus {
	t.Helper()
	for _, l := range res.Status.Gateways[types.NamespacedName{Namespace: ns, Name: gw}].Listeners {
		if string(l.Name) == listener {
			return l
		}
	}
	t.Fatalf("Gateway %s/%s has no listener %s", ns, gw, listener)
	return gatewayv1.ListenerStatus{}
}

func wantAttachedSets(t *testing.T, res Result, gw string, n int32) {
	t.Helper()
	st := res.Status.Gateways[types.NamespacedName{Namespace: infraNS, Name: gw}]
	wantCond(t, st.Conditions, "Accepted", true, "Accepted")
	if got := st.AttachedListenerSets; (got == nil && n != 0) || (got != nil && *got != n) {
		t.Fatalf("Gateway %s attachedListenerSets = %v; want %d", gw, got, n)
	}
}

func TestListenerSetsNotAllowed(t *testing.T) {
	for _, tc := range []struct {
		file, gw  string
		rejected  []types.NamespacedName
		attached  int32
		allowedLS types.NamespacedName
		listener  string
	}{
		{file: "listenerset-default-not-allowed.yaml", gw: "gateway-default-does-not-allow-listenerset",
			rejected: []types.NamespacedName{{Namespace: infraNS, Name: "listenerset-default-not-allowed"}}},
		{file: "listenerset-allowed-namespace-none.yaml", gw: "gateway-does-not-allow-listenerset",
			rejected: []types.NamespacedName{{Namespace: infraNS, Name: "listenerset-not-allowed"}}},
		{file: "listenerset-allowed-namespace-same.yaml", gw: "gateway-allows-listenerset-in-same-namespace", attached: 1,
			rejected:  []types.NamespacedName{{Namespace: "gateway-api-listenerset-not-allowed-ns", Name: "listenerset-in-different-namespace"}},
			allowedLS: types.NamespacedName{Namespace: infraNS, Name: "listenerset-in-same-namespace"}, listener: "listenerset-in-same-namespace-listener"},
		{file: "listenerset-allowed-namespace-selector.yaml", gw: "gateway-allows-listenerset-in-selected-namespace", attached: 1,
			rejected:  []types.NamespacedName{{Namespace: "gateway-api-listenerset-selector-not-allowed-ns", Name: "listenerset-not-in-selected-namespace"}},
			allowedLS: types.NamespacedName{Namespace: "gateway-api-listenerset-selector-allowed-ns", Name: "listenerset-in-selected-namespace"},
			listener:  "listenerset-in-selected-namespace-listener"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res := Build(suiteInputs(t, tc.file))
			wantAttachedSets(t, res, tc.gw, tc.attached)
			for _, r := range tc.rejected {
				wantSet(t, res, r.Namespace, r.Name, false, "NotAllowed", "NotAllowed")
			}
			if tc.listener != "" {
				wantSet(t, res, tc.allowedLS.Namespace, tc.allowedLS.Name, true, "Accepted", "Programmed")
				wantListenerOK(t, setListener(t, res, tc.allowedLS.Namespace, tc.allowedLS.Name, tc.listener).Conditions)
			}
		})
	}
}

// TestListenerSetConflictsByPrecedence: the Gateway's listeners win
// over a set's, an older (here: first by name) set's over a later one;
// the later listener alone is Conflicted, and a set left with none is
// not accepted.
func TestListenerSetConflictsByPrecedence(t *testing.T) {
	for _, tc := range []struct {
		file, gw, prefix string
		reason           gatewayv1.ListenerConditionReason
	}{
		{"listenerset-protocol-conflict.yaml", "gateway-with-listenerset-protocol-conflict", "protocol", gatewayv1.ListenerReasonProtocolConflict},
		{"listenerset-hostname-conflict.yaml", "gateway-with-listenerset-hostname-conflict", "hostname", gatewayv1.ListenerReasonHostnameConflict},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res := Build(suiteInputs(t, tc.file))
			p := tc.prefix
			wantAttachedSets(t, res, tc.gw, 2)
			wantListenerOK(t, gwListener(t, res, infraNS, tc.gw, "gateway-listener").Conditions)
			wantListenerOK(t, gwListener(t, res, infraNS, tc.gw, p+"-conflict-with-gateway-listener").Conditions)

			ls := "listenerset-with-" + p + "-conflict-with-gateway-1"
			wantSet(t, res, infraNS, ls, true, "", "Programmed")
			wantListenerOK(t, setListener(t, res, infraNS, ls, "listener-set-1-listener").Conditions)
			wantConflicted(t, setListener(t, res, infraNS, ls, p+"-conflict-with-gateway-listener").Conditions, tc.reason)
			wantListenerOK(t, setListener(t, res, infraNS, ls, p+"-conflict-with-listener-set-listener").Conditions)

			ls = "listenerset-with-" + p + "-conflict-with-gateway-2"
			wantSet(t, res, infraNS, ls, false, "ListenersNotValid", "ListenersNotValid")
			wantConflicted(t, setListener(t, res, infraNS, ls, p+"-conflict-with-gateway-listener").Conditions, tc.reason)

			ls = "listenerset-with-" + p + "-conflict-with-listener-set-1"
			wantSet(t, res, infraNS, ls, true, "", "Programmed")
			wantListenerOK(t, setListener(t, res, infraNS, ls, "listener-set-2-listener").Conditions)
			wantConflicted(t, setListener(t, res, infraNS, ls, p+"-conflict-with-listener-set-listener").Conditions, tc.reason)

			ls = "listenerset-with-" + p + "-conflict-with-listener-set-2"
			wantSet(t, res, infraNS, ls, false, "ListenersNotValid", "ListenersNotValid")
			wantConflicted(t, setListener(t, res, infraNS, ls, p+"-conflict-with-listener-set-listener").Conditions, tc.reason)

			// Served on the Gateway's VIP: port 80 as HTTP only (the
			// conflicted TCP listeners are not served).
			mg := modelGateway(t, res, infraNS, tc.gw)
			if len(mg.Listeners) != 1 || mg.Listeners[0].Port != 80 || mg.Listeners[0].Protocol != model.HTTP {
				t.Fatalf("model listeners = %+v; want HTTP 80 alone", mg.Listeners)
			}
		})
	}
}

func modelGateway(t *testing.T, res Result, ns, name string) model.Gateway {
	t.Helper()
	for _, g := range res.Config.Gateways {
		if g.Name == gatewayModelName(ns, name) {
			return g
		}
	}
	t.Fatalf("no model gateway for %s/%s", ns, name)
	return model.Gateway{}
}

// routeParent returns the route's status under the parentRef of kind
// kind naming name.
func routeParent(t *testing.T, res Result, route types.NamespacedName, kind, name string) gatewayv1.RouteParentStatus {
	t.Helper()
	for _, p := range res.Status.HTTPRoutes[route].Parents {
		k := kindGateway
		if p.ParentRef.Kind != nil {
			k = string(*p.ParentRef.Kind)
		}
		if k == kind && string(p.ParentRef.Name) == name {
			return p
		}
	}
	t.Fatalf("HTTPRoute %s has no status for %s %s: %+v", route, kind, name, res.Status.HTTPRoutes[route].Parents)
	return gatewayv1.RouteParentStatus{}
}

// serviceHosts returns the hostnames each model service of route serves.
func serviceHosts(res Result, route types.NamespacedName) []string {
	var out []string
	for _, s := range res.Config.Services {
		if s.Origin == model.Origin(route.Namespace+"/"+route.Name) {
			out = append(out, s.Hosts...)
		}
	}
	slices.Sort(out)
	return out
}

// TestListenerSetHTTPRouting: a parentRef of kind ListenerSet reaches
// the set's listeners (sectionName one of them), a parentRef to the
// Gateway its own listeners alone, and the set's hostnames are served on
// the Gateway's VIP.
func TestListenerSetHTTPRouting(t *testing.T) {
	res := Build(suiteInputs(t, "listenerset-http-routing.yaml"))
	gw := "gateway-with-listener-sets-http-routing"
	wantAttachedSets(t, res, gw, 2)
	for set, counts := range map[string][2]int32{"listener-set-http-routing-1": {3, 2}, "listener-set-http-routing-2": {2, 2}} {
		wantSet(t, res, infraNS, set, true, "Accepted", "Programmed")
		for i, n := range counts {
			l := setListener(t, res, infraNS, set, set+"-listener-"+string(rune('1'+i)))
			wantListenerOK(t, l.Conditions)
			if l.AttachedRoutes != n || len(l.SupportedKinds) == 0 {
				t.Fatalf("%s listener %s: attachedRoutes %d, kinds %v; want %d", set, l.Name, l.AttachedRoutes, l.SupportedKinds, n)
			}
		}
	}
	all := types.NamespacedName{Namespace: infraNS, Name: "attaches-to-all-listeners"}
	for _, p := range res.Status.HTTPRoutes[all].Parents {
		wantCond(t, p.Conditions, "Accepted", true, "Accepted")
	}
	want := []string{"gateway-listener-1.com", "gateway-listener-2.com",
		"listener-set-http-routing-1-listener-1.com", "listener-set-http-routing-1-listener-2.com",
		"listener-set-http-routing-2-listener-1.com", "listener-set-http-routing-2-listener-2.com"}
	if got := serviceHosts(res, all); !slices.Equal(got, want) {
		t.Fatalf("hosts of %s = %v; want %v", all.Name, got, want)
	}
	if got := serviceHosts(res, types.NamespacedName{Namespace: infraNS, Name: "gateway-route"}); !slices.Equal(got, want[:2]) {
		t.Fatalf("a Gateway parentRef reached %v; want the Gateway's own listeners %v", got, want[:2])
	}
	mg := modelGateway(t, res, infraNS, gw)
	if len(mg.Listeners) != 1 || mg.Listeners[0].VIP != netip.MustParseAddr(testVIP) || mg.Listeners[0].Port != 80 {
		t.Fatalf("model listeners = %+v; want one HTTP listener on %s:80", mg.Listeners, testVIP)
	}
}

// TestListenerSetSectionNameNotOnGateway: a Gateway parentRef cannot
// name a set's listener; a ListenerSet parentRef can.
func TestListenerSetSectionNameNotOnGateway(t *testing.T) {
	res := Build(suiteInputs(t, "listenerset-gateway-parent-section-name-not-found.yaml"))
	wantAttachedSets(t, res, "gateway-section-name", 1)
	bad := routeParent(t, res, types.NamespacedName{Namespace: infraNS, Name: "route-via-gateway"}, kindGateway, "gateway-section-name")
	wantCond(t, bad.Conditions, "Accepted", false, string(gatewayv1.RouteReasonNoMatchingParent))
	good := routeParent(t, res, types.NamespacedName{Namespace: infraNS, Name: "route-via-listenerset"}, kindListenerSet, "listenerset-section-name")
	wantCond(t, good.Conditions, "Accepted", true, "Accepted")
	if got := serviceHosts(res, types.NamespacedName{Namespace: infraNS, Name: "route-via-listenerset"}); !slices.Equal(got, []string{"ls-section-name.com"}) {
		t.Fatalf("hosts = %v; want ls-section-name.com", got)
	}
}

// TestListenerSetRoutesNamespaces: allowedRoutes Same on a set's
// listener means the set's namespace.
func TestListenerSetRoutesNamespaces(t *testing.T) {
	res := Build(suiteInputs(t, "listenerset-allowed-routes-namespaces.yaml"))
	wantAttachedSets(t, res, "gateway-with-listener-sets-test-allowed-routes", 2)
	for l, n := range map[string]int32{"listener-set-listener-allowed-routes-all": 3, "listener-set-listener-allowed-routes-same": 1, "listener-set-listener-allowed-routes-selector": 1} {
		if got := setListener(t, res, infraNS, "listenerset-test-allowed-routes-namespaces", l); got.AttachedRoutes != n {
			t.Errorf("%s attachedRoutes = %d; want %d", l, got.AttachedRoutes, n)
		}
	}
	const crossNS = "gateway-api-ls-cross-ns"
	if got := setListener(t, res, crossNS, "listenerset-test-allowed-routes-cross-ns", "listener-set-listener-allowed-routes-cross-ns-same"); got.AttachedRoutes != 1 {
		t.Errorf("cross-namespace set's listener attachedRoutes = %d; want 1", got.AttachedRoutes)
	}
	p := routeParent(t, res, types.NamespacedName{Namespace: infraNS, Name: "route-in-gateway-namespace"}, kindListenerSet, "listenerset-test-allowed-routes-cross-ns")
	wantCond(t, p.Conditions, "Accepted", false, string(gatewayv1.RouteReasonNotAllowedByListeners))
}

// TestListenerSetReferenceGrant: a set's certificate in another
// namespace needs a ReferenceGrant from kind ListenerSet.
func TestListenerSetReferenceGrant(t *testing.T) {
	res := Build(suiteInputs(t, "listenerset-reference-grant.yaml"))
	wantSet(t, res, infraNS, "listenerset-with-reference-grant", true, "", "Programmed")
	wantCond(t, setListener(t, res, infraNS, "listenerset-with-reference-grant", "listenerset-with-reference-grant-listener").Conditions,
		"ResolvedRefs", true, "ResolvedRefs")
	const ns = "gateway-api-listener-sets-test-reference-grant-ns"
	wantSet(t, res, ns, "listenerset-without-reference-grant", false, "ListenersNotValid", "ListenersNotValid")
	wantCond(t, setListener(t, res, ns, "listenerset-without-reference-grant", "listenerset-without-reference-grant-listener").Conditions,
		"ResolvedRefs", false, string(gatewayv1.ListenerReasonRefNotPermitted))

	// The grant to Gateways alone does not reach the set's listeners.
	in := suiteInputs(t, "listenerset-reference-grant.yaml")
	in.ReferenceGrants = slices.DeleteFunc(in.ReferenceGrants, func(g *gatewayv1.ReferenceGrant) bool { return g.Name == "reference-grant-for-listener-set" })
	res = Build(in)
	wantCond(t, setListener(t, res, infraNS, "listenerset-with-reference-grant", "listenerset-with-reference-grant-listener").Conditions,
		"ResolvedRefs", false, string(gatewayv1.ListenerReasonRefNotPermitted))
	wantCond(t, gwListener(t, res, infraNS, "gateway-with-listener-sets-test-reference-grant", "gateway-listener").Conditions, "ResolvedRefs", true, "ResolvedRefs")
}

func TestListenerSetUnsupportedRouteKinds(t *testing.T) {
	res := Build(suiteInputs(t, "listenerset-allowed-routes-supported-kinds.yaml"))
	l := setListener(t, res, infraNS, "listenerset-test-allowed-routes-supported-kinds", "listener-set-listener-allowed-routes-tls-only")
	wantCond(t, l.Conditions, "ResolvedRefs", false, string(gatewayv1.ListenerReasonInvalidRouteKinds))
}

// TestListenerSetDualParentRefs: a route's parentRefs to the Gateway
// and to a set are judged apart.
func TestListenerSetDualParentRefs(t *testing.T) {
	res := Build(suiteInputs(t, "listenerset-dual-parentref-independence.yaml"))
	both := types.NamespacedName{Namespace: infraNS, Name: "route-dual-parentref-both"}
	wantCond(t, routeParent(t, res, both, kindGateway, "gateway-dual-parentref").Conditions, "Accepted", true, "Accepted")
	wantCond(t, routeParent(t, res, both, kindListenerSet, "ls-dual-parentref").Conditions, "Accepted", true, "Accepted")
	one := types.NamespacedName{Namespace: infraNS, Name: "route-dual-parentref-one"}
	wantCond(t, routeParent(t, res, one, kindGateway, "gateway-dual-parentref").Conditions, "Accepted", false, string(gatewayv1.RouteReasonNoMatchingParent))
	wantCond(t, routeParent(t, res, one, kindListenerSet, "ls-dual-parentref").Conditions, "Accepted", true, "Accepted")
	if got := setListener(t, res, infraNS, "ls-dual-parentref", "ls-dual-parentref-listener").AttachedRoutes; got != 2 {
		t.Fatalf("attachedRoutes = %d; want 2", got)
	}
}

// TestGatewayWithoutSetsKeepsItsStatus: a Gateway that allows no sets
// reports no attachedListenerSets (its status is unchanged).
func TestGatewayWithoutSetsKeepsItsStatus(t *testing.T) {
	res := Build(world(t))
	if got := res.Status.Gateways[gwKey].AttachedListenerSets; got != nil {
		t.Fatalf("attachedListenerSets = %d; want none", *got)
	}
}
