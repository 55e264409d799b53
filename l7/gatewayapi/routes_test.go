package gatewayapi

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

var routeKeyR = nn("app", "r")

func TestHTTPRouteParentConditions(t *testing.T) {
	sameOnly := func(in *Inputs) {
		for i := range in.Gateways[0].Spec.Listeners {
			in.Gateways[0].Spec.Listeners[i].AllowedRoutes = nil
		}
	}
	selector := func(labels map[string]string) func(*Inputs) {
		return func(in *Inputs) {
			in.Gateways[0].Spec.Listeners[0].AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{
				From: ptr(gatewayv1.NamespacesFromSelector), Selector: &metav1.LabelSelector{MatchLabels: labels}}}
		}
	}
	backend := func(ref gatewayv1.BackendRef) func(*gatewayv1.HTTPRoute) {
		return func(r *gatewayv1.HTTPRoute) { r.Spec.Rules[0].BackendRefs = httpBackends(ref) }
	}
	grant := func(in *Inputs) {
		in.ReferenceGrants = append(in.ReferenceGrants, &gatewayv1.ReferenceGrant{ObjectMeta: meta("other", "g"), Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "app"}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Service"}},
		}})
	}
	otherNS := func(in *Inputs) {
		in.Services = append(in.Services, testService("other", "api", in.Services[0].Spec.Ports...))
	}
	for name, tc := range map[string]struct {
		world    func(*Inputs)
		route    func(*gatewayv1.HTTPRoute)
		accepted string
		resolved string
		attached int32
	}{
		"accepted":        {accepted: "True/Accepted", resolved: "True/ResolvedRefs", attached: 1},
		"no such section": {route: func(r *gatewayv1.HTTPRoute) { r.Spec.ParentRefs[0].SectionName = ptr(gatewayv1.SectionName("nope")) }, accepted: "False/NoMatchingParent", resolved: "True/ResolvedRefs"},
		"port matches no listener": {route: func(r *gatewayv1.HTTPRoute) {
			r.Spec.ParentRefs[0].SectionName, r.Spec.ParentRefs[0].Port = nil, ptr(int32(81))
		}, accepted: "False/NoMatchingParent", resolved: "True/ResolvedRefs"},
		"port matches a listener": {route: func(r *gatewayv1.HTTPRoute) {
			r.Spec.ParentRefs[0].SectionName, r.Spec.ParentRefs[0].Port = nil, ptr(int32(80))
		}, accepted: "True/Accepted", resolved: "True/ResolvedRefs", attached: 1},
		"namespace not allowed":   {world: sameOnly, accepted: "False/NotAllowedByListeners", resolved: "True/ResolvedRefs"},
		"selector matches":        {world: selector(map[string]string{"team": "a"}), accepted: "True/Accepted", resolved: "True/ResolvedRefs", attached: 1},
		"selector does not match": {world: selector(map[string]string{"team": "b"}), accepted: "False/NotAllowedByListeners", resolved: "True/ResolvedRefs"},
		"kind not allowed": {route: func(r *gatewayv1.HTTPRoute) { r.Spec.ParentRefs[0].SectionName = ptr(gatewayv1.SectionName("tls")) },
			accepted: "False/NotAllowedByListeners", resolved: "True/ResolvedRefs"},
		"no matching hostname": {route: func(r *gatewayv1.HTTPRoute) {
			r.Spec.ParentRefs[0].SectionName = ptr(gatewayv1.SectionName("https"))
			r.Spec.Hostnames = []gatewayv1.Hostname{"shop.example.org"}
		}, accepted: "False/NoMatchingListenerHostname", resolved: "True/ResolvedRefs"},
		"backend of an unknown kind": {route: backend(gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Kind: ptr(gatewayv1.Kind("Pod")), Name: "web", Port: ptr(int32(8080))}}),
			accepted: "True/Accepted", resolved: "False/InvalidKind", attached: 1},
		"backend not found":      {route: backend(backendRef("", "nope", 8080, nil)), accepted: "True/Accepted", resolved: "False/BackendNotFound", attached: 1},
		"backend port not found": {route: backend(backendRef("", "web", 9999, nil)), accepted: "True/Accepted", resolved: "False/BackendNotFound", attached: 1},
		"cross-namespace backend without a grant": {world: otherNS, route: backend(backendRef("other", "api", 8080, nil)),
			accepted: "True/Accepted", resolved: "False/RefNotPermitted", attached: 1},
		"cross-namespace backend with a grant": {world: func(in *Inputs) { otherNS(in); grant(in) }, route: backend(backendRef("other", "api", 8080, nil)),
			accepted: "True/Accepted", resolved: "True/ResolvedRefs", attached: 1},
		"unsupported filter": {route: func(r *gatewayv1.HTTPRoute) {
			r.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef, ExtensionRef: &gatewayv1.LocalObjectReference{Kind: "X", Name: "y"}}}
		}, accepted: "False/UnsupportedValue", resolved: "True/ResolvedRefs"},
		"unsupported redirect status": {route: func(r *gatewayv1.HTTPRoute) {
			r.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{StatusCode: ptr(305)}}}
		}, accepted: "False/UnsupportedValue", resolved: "True/ResolvedRefs"},
		"prefix rewrite without a prefix match": {route: func(r *gatewayv1.HTTPRoute) {
			r.Spec.Rules[0].Matches = []gatewayv1.HTTPRouteMatch{{Path: pathMatch(gatewayv1.PathMatchExact, "/x")}}
			r.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
				Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr("/y")}}}}
		}, accepted: "False/UnsupportedValue", resolved: "True/ResolvedRefs"},
		"wildcard inside a CORS origin": {route: func(r *gatewayv1.HTTPRoute) {
			r.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"https://app.*.example.com"}}}}
		}, accepted: "False/UnsupportedValue", resolved: "True/ResolvedRefs"},
		"gateway not accepted": {world: func(in *Inputs) { in.Classes[0].Spec.ParametersRef.Name = "missing" }, accepted: "False/NoMatchingParent", resolved: "True/ResolvedRefs"},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			if tc.world != nil {
				tc.world(&in)
			}
			hr := testHTTPRoute("r")
			hr.Generation = 7
			if tc.route != nil {
				tc.route(hr)
			}
			in.HTTPRoutes = append(in.HTTPRoutes, hr)
			res := Build(in)
			st, ok := res.Status.HTTPRoutes[routeKeyR]
			if !ok || len(st.Parents) != 1 {
				t.Fatalf("route status %+v; want one parent", st)
			}
			p := st.Parents[0]
			if p.ControllerName != ControllerName || p.ParentRef.Name != "gw" {
				t.Fatalf("parent %+v; want ours, for gw", p)
			}
			for typ, want := range map[string]string{"Accepted": tc.accepted, "ResolvedRefs": tc.resolved} {
				c := cond(t, p.Conditions, typ)
				if got := string(c.Status) + "/" + c.Reason; got != want {
					t.Errorf("%s = %s (%s); want %s", typ, got, c.Message, want)
				}
				if c.ObservedGeneration != 7 {
					t.Errorf("%s observedGeneration %d; want 7", typ, c.ObservedGeneration)
				}
			}
			var attached int32
			for _, l := range res.Status.Gateways[gwKey].Listeners {
				attached += l.AttachedRoutes
			}
			if attached != tc.attached {
				t.Errorf("attachedRoutes %d; want %d", attached, tc.attached)
			}
			if served := len(res.Config.Services) > 0; served != (tc.attached > 0) {
				t.Errorf("%d model services; want some only when attached", len(res.Config.Services))
			}
		})
	}
}

func TestRouteStatusOnlyForOurGateways(t *testing.T) {
	in := world(t)
	hr := testHTTPRoute("r")
	hr.Spec.ParentRefs = append(hr.Spec.ParentRefs, parentRef("infra", "someone-elses", ""),
		gatewayv1.ParentReference{Kind: ptr(gatewayv1.Kind("Service")), Name: "web"})
	in.HTTPRoutes = append(in.HTTPRoutes, hr, func() *gatewayv1.HTTPRoute {
		r := testHTTPRoute("elsewhere")
		r.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "someone-elses", "")}
		return r
	}())
	res := Build(in)
	if n := len(res.Status.HTTPRoutes[routeKeyR].Parents); n != 1 {
		t.Fatalf("%d parents; want only the one for our Gateway", n)
	}
	if _, ok := res.Status.HTTPRoutes[nn("app", "elsewhere")]; ok {
		t.Fatal("status written for a route of no Gateway of ours")
	}
}

func TestAttachedRoutesCountsEachRouteOncePerListener(t *testing.T) {
	in := world(t)
	hr := testHTTPRoute("r")
	hr.Spec.ParentRefs = append(hr.Spec.ParentRefs, gatewayv1.ParentReference{Namespace: ptr(gatewayv1.Namespace("infra")), Name: "gw", Port: ptr(int32(80))})
	in.HTTPRoutes = append(in.HTTPRoutes, hr, testHTTPRoute("r2"))
	hosts := testHTTPRoute("r3")
	hosts.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", "")}
	hosts.Spec.Hostnames = []gatewayv1.Hostname{"a.example.com"}
	in.HTTPRoutes = append(in.HTTPRoutes, hosts)
	got := map[string]int32{}
	for _, l := range Build(in).Status.Gateways[gwKey].Listeners {
		got[string(l.Name)] = l.AttachedRoutes
	}
	// r and r2 on http; r3 (no sectionName) on http and https (its
	// host is under *.example.com) but not on tls (kind).
	if got["http"] != 3 || got["https"] != 1 || got["tls"] != 0 {
		t.Fatalf("attachedRoutes %v; want http 3, https 1, tls 0", got)
	}
}

func TestHostnameIntersection(t *testing.T) {
	for name, tc := range map[string]struct {
		route    []gatewayv1.Hostname
		listener string
		want     []string
		ok       bool
	}{
		"both any":                  {nil, "", nil, true},
		"route any":                 {nil, "*.example.com", []string{"*.example.com"}, true},
		"listener any":              {[]gatewayv1.Hostname{"a.example.com"}, "", []string{"a.example.com"}, true},
		"exact under wildcard":      {[]gatewayv1.Hostname{"a.example.com", "b.example.org"}, "*.example.com", []string{"a.example.com"}, true},
		"deep under wildcard":       {[]gatewayv1.Hostname{"a.b.example.com"}, "*.example.com", []string{"a.b.example.com"}, true},
		"wildcard over exact":       {[]gatewayv1.Hostname{"*.example.com"}, "a.example.com", []string{"a.example.com"}, true},
		"wildcard is not its apex":  {[]gatewayv1.Hostname{"example.com"}, "*.example.com", nil, false},
		"narrower wildcard":         {[]gatewayv1.Hostname{"*.a.example.com"}, "*.example.com", []string{"*.a.example.com"}, true},
		"wider wildcard":            {[]gatewayv1.Hostname{"*.example.com"}, "*.a.example.com", []string{"*.a.example.com"}, true},
		"none":                      {[]gatewayv1.Hostname{"a.example.org"}, "a.example.com", nil, false},
		"same wildcard":             {[]gatewayv1.Hostname{"*.example.com"}, "*.example.com", []string{"*.example.com"}, true},
		"upper case route hostname": {[]gatewayv1.Hostname{"A.example.com"}, "", []string{"a.example.com"}, true},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := intersect(tc.route, tc.listener)
			if ok != tc.ok || len(got) != len(tc.want) {
				t.Fatalf("intersect(%v, %q) = %v, %v; want %v, %v", tc.route, tc.listener, got, ok, tc.want, tc.ok)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("intersect(%v, %q) = %v; want %v", tc.route, tc.listener, got, tc.want)
				}
			}
		})
	}
}

// TestRoutesAttachToListenersWithUnresolvedRefs: a listener whose
// certificate does not resolve still counts the routes attached to it
// (the conformance suite's GatewayWithAttachedRoutes), though it is not
// programmed.
func TestRoutesAttachToListenersWithUnresolvedRefs(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{func() gatewayv1.Listener {
		l := httpsListener("tls", 443, "", secretRef("", "does-not-exist"))
		l.AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromSelector),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}}
		return l
	}()}
	hr := testHTTPRoute("r")
	hr.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", "tls")}
	hr.Spec.Rules[0].BackendRefs = httpBackends(backendRef("", "does-not-exist", 8080, nil))
	in.HTTPRoutes = append(in.HTTPRoutes, hr)
	res := Build(in)
	ls := res.Status.Gateways[gwKey].Listeners[0]
	if ls.AttachedRoutes != 1 {
		t.Fatalf("attachedRoutes %d; want 1", ls.AttachedRoutes)
	}
	wantCond(t, ls.Conditions, "Programmed", false, "Invalid")
	wantCond(t, ls.Conditions, "ResolvedRefs", false, "InvalidCertificateRef")
	p := res.Status.HTTPRoutes[routeKeyR].Parents[0]
	wantCond(t, p.Conditions, "Accepted", true, "Accepted")
	wantCond(t, p.Conditions, "ResolvedRefs", false, "BackendNotFound")
	if len(res.Config.Services) != 0 {
		t.Fatalf("services %s; want none on an unprogrammed listener", jsonOf(res.Config.Services))
	}
}
