package gatewayapi

import (
	"net/netip"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

func TestGatewayConditions(t *testing.T) {
	type want struct {
		accepted       bool
		acceptedReason gatewayv1.GatewayConditionReason
		programmed     bool
		progReason     gatewayv1.GatewayConditionReason
		addresses      int
		// served is whether the Gateway is in the model (and its
		// listeners Programmed), when it differs from programmed.
		served *bool
	}
	for name, tc := range map[string]struct {
		edit func(*Inputs)
		want want
	}{
		"valid with a VIP": {func(*Inputs) {}, want{true, gatewayv1.GatewayReasonAccepted, true, gatewayv1.GatewayReasonProgrammed, 1, nil}},
		"no VIP yet": {func(in *Inputs) { in.Addresses = nil },
			want{true, gatewayv1.GatewayReasonAccepted, false, gatewayv1.GatewayReasonAddressNotAssigned, 0, nil}},
		"hostname address requested": {func(in *Inputs) {
			in.Gateways[0].Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Type: ptr(gatewayv1.HostnameAddressType), Value: "gw.example.com"}}
		}, want{false, gatewayv1.GatewayReasonUnsupportedAddress, false, gatewayv1.GatewayReasonInvalid, 1, nil}},
		"bad IP requested": {func(in *Inputs) {
			in.Gateways[0].Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Type: ptr(gatewayv1.IPAddressType), Value: "300.1.1.1"}}
		}, want{false, gatewayv1.GatewayReasonUnsupportedAddress, false, gatewayv1.GatewayReasonInvalid, 1, nil}},
		"requested address assigned": {func(in *Inputs) {
			in.Gateways[0].Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Type: ptr(gatewayv1.IPAddressType), Value: testVIP}}
		}, want{true, gatewayv1.GatewayReasonAccepted, true, gatewayv1.GatewayReasonProgrammed, 1, nil}},
		// Another address than the one requested (the request changed,
		// the IPAM has not moved it yet): served where it is, reported.
		"requested address not assigned": {func(in *Inputs) {
			in.Gateways[0].Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Value: "203.0.113.99"}}
		}, want{true, gatewayv1.GatewayReasonAccepted, false, gatewayv1.GatewayReasonAddressNotAssigned, 1, ptr(true)}},
		"requested address pending": {func(in *Inputs) {
			in.Gateways[0].Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Value: "203.0.113.99"}}
			in.Addresses = nil
		}, want{true, gatewayv1.GatewayReasonAccepted, false, gatewayv1.GatewayReasonAddressNotAssigned, 0, nil}},
		"requested address refused": {func(in *Inputs) {
			in.Gateways[0].Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Value: "203.0.113.99"}}
			in.Addresses = nil
			in.AddressProblems = map[types.NamespacedName][]AddressProblem{gwKey: {{Address: netip.MustParseAddr("203.0.113.99"), Reason: "VIPInUse", Message: "held"}}}
		}, want{true, gatewayv1.GatewayReasonAccepted, false, gatewayv1.GatewayReasonAddressNotUsable, 0, nil}},
		"some listeners invalid": {func(in *Inputs) {
			in.Gateways[0].Spec.Listeners = append(in.Gateways[0].Spec.Listeners, gatewayv1.Listener{Name: "sctp", Port: 53, Protocol: "example.com/sctp"})
		}, want{true, gatewayv1.GatewayReasonListenersNotValid, true, gatewayv1.GatewayReasonProgrammed, 1, nil}},
		"no listener valid": {func(in *Inputs) {
			in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{{Name: "sctp", Port: 5432, Protocol: "example.com/sctp"}}
		}, want{false, gatewayv1.GatewayReasonListenersNotValid, false, gatewayv1.GatewayReasonInvalid, 1, nil}},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			tc.edit(&in)
			res := Build(in)
			st := res.Status.Gateways[gwKey]
			wantCond(t, st.Conditions, string(gatewayv1.GatewayConditionAccepted), tc.want.accepted, string(tc.want.acceptedReason))
			wantCond(t, st.Conditions, string(gatewayv1.GatewayConditionProgrammed), tc.want.programmed, string(tc.want.progReason))
			for _, c := range st.Conditions {
				if c.ObservedGeneration != 3 {
					t.Errorf("%s: observedGeneration %d; want 3", c.Type, c.ObservedGeneration)
				}
			}
			if len(st.Addresses) != tc.want.addresses {
				t.Fatalf("addresses %v; want %d", st.Addresses, tc.want.addresses)
			}
			if tc.want.addresses > 0 && (st.Addresses[0].Value != testVIP || *st.Addresses[0].Type != gatewayv1.IPAddressType) {
				t.Fatalf("address %+v; want IPAddress %s", st.Addresses[0], testVIP)
			}
			served := tc.want.programmed
			if tc.want.served != nil {
				served = *tc.want.served
			}
			for _, l := range st.Listeners {
				if cond(t, l.Conditions, "Accepted").Status != "True" {
					continue
				}
				if c := cond(t, l.Conditions, "Programmed"); (c.Status == "True") != served ||
					(!served && tc.want.progReason == gatewayv1.GatewayReasonAddressNotAssigned && c.Reason != string(gatewayv1.ListenerReasonPending)) {
					t.Errorf("listener %s Programmed %s/%s; want it to follow the Gateway's", l.Name, c.Status, c.Reason)
				}
			}
			if got := len(res.Config.Gateways); (got == 1) != served {
				t.Fatalf("%d model gateways; want one only when served", got)
			}
		})
	}
}

// listenerWant is the wanted conditions of one listener: for each type,
// "True/Reason" or "False/Reason".
type listenerWant map[gatewayv1.ListenerConditionType]string

func TestListenerConditions(t *testing.T) {
	grant := func(in *Inputs) {
		in.ReferenceGrants = append(in.ReferenceGrants, &gatewayv1.ReferenceGrant{ObjectMeta: meta("certs", "g"), Spec: gatewayv1.ReferenceGrantSpec{
			From: []gatewayv1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: "infra"}},
			To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: "Secret", Name: ptr(gatewayv1.ObjectName("shared"))}},
		}})
	}
	ok := listenerWant{"Accepted": "True/Accepted", "Programmed": "True/Programmed", "ResolvedRefs": "True/ResolvedRefs", "Conflicted": "False/NoConflicts"}
	for name, tc := range map[string]struct {
		listeners []gatewayv1.Listener
		edit      func(*Inputs)
		want      map[string]listenerWant
		kinds     map[string][]string
	}{
		"valid HTTP, HTTPS and TLS": {
			listeners: []gatewayv1.Listener{httpListener("a", 80, ""), httpsListener("b", 443, "", secretRef("", "wild")), tlsListener("c", 8443, "")},
			want:      map[string]listenerWant{"a": ok, "b": ok, "c": ok},
			kinds:     map[string][]string{"a": {"HTTPRoute", "GRPCRoute"}, "b": {"HTTPRoute", "GRPCRoute"}, "c": {"TLSRoute"}},
		},
		"unsupported protocol": {
			listeners: []gatewayv1.Listener{{Name: "a", Port: 5432, Protocol: "example.com/sctp"}, httpListener("b", 80, "")},
			want:      map[string]listenerWant{"a": {"Accepted": "False/UnsupportedProtocol", "Programmed": "False/Invalid"}, "b": ok},
			kinds:     map[string][]string{"a": {}},
		},
		"HTTPS passthrough": {
			listeners: []gatewayv1.Listener{func() gatewayv1.Listener {
				l := httpsListener("a", 443, "", secretRef("", "wild"))
				l.TLS.Mode = ptr(gatewayv1.TLSModePassthrough)
				return l
			}()},
			want:  map[string]listenerWant{"a": {"Accepted": "False/UnsupportedValue", "Programmed": "False/Invalid"}},
			kinds: map[string][]string{"a": {}},
		},
		// Terminate is served (tlsterminate_test.go); without a
		// certificate the listener is accepted with ResolvedRefs False
		// and not programmed, as an HTTPS listener without one.
		"TLS terminate without certificate": {
			listeners: []gatewayv1.Listener{func() gatewayv1.Listener {
				l := tlsListener("a", 443, "terminate.example.com")
				l.TLS.Mode = ptr(gatewayv1.TLSModeTerminate)
				l.AllowedRoutes = &gatewayv1.AllowedRoutes{Kinds: []gatewayv1.RouteGroupKind{{Kind: "TLSRoute"}}}
				return l
			}()},
			want:  map[string]listenerWant{"a": {"Accepted": "True/Accepted", "Programmed": "False/Invalid", "ResolvedRefs": "False/InvalidCertificateRef"}},
			kinds: map[string][]string{"a": {"TLSRoute"}},
		},
		// Issue 22: spec.tls.frontend was ignored, the listener served
		// without the client certificates its owner asked for. A CA
		// that cannot be read still keeps the listener out (issue 24
		// serves the validation: frontendtls_test.go).
		"client certificate validation asked": {
			listeners: []gatewayv1.Listener{httpListener("a", 80, ""), httpsListener("b", 443, "", secretRef("", "wild")), httpsListener("c", 8443, "", secretRef("", "wild"))},
			edit: func(in *Inputs) {
				in.Gateways[0].Spec.TLS = &gatewayv1.GatewayTLSConfig{Frontend: &gatewayv1.FrontendTLSConfig{
					Default: gatewayv1.TLSConfig{Validation: &gatewayv1.FrontendTLSValidation{
						CACertificateRefs: []gatewayv1.ObjectReference{{Kind: "ConfigMap", Name: "ca"}}}},
					PerPort: []gatewayv1.TLSPortConfig{{Port: 8443, TLS: gatewayv1.TLSConfig{}}},
				}}
			},
			want: map[string]listenerWant{"a": ok, "b": {"Accepted": "False/NoValidCACertificate", "ResolvedRefs": "False/InvalidCACertificateRef", "Programmed": "False/Invalid"}, "c": ok},
		},
		"invalid route kinds": {
			listeners: []gatewayv1.Listener{func() gatewayv1.Listener {
				l := httpListener("a", 80, "")
				l.AllowedRoutes = &gatewayv1.AllowedRoutes{Kinds: []gatewayv1.RouteGroupKind{{Kind: "HTTPRoute"}, {Kind: "TCPRoute"}}}
				return l
			}()},
			want:  map[string]listenerWant{"a": {"Accepted": "True/Accepted", "ResolvedRefs": "False/InvalidRouteKinds", "Programmed": "True/Programmed"}},
			kinds: map[string][]string{"a": {"HTTPRoute"}},
		},
		"only invalid route kinds": {
			listeners: []gatewayv1.Listener{func() gatewayv1.Listener {
				l := httpListener("a", 80, "")
				l.AllowedRoutes = &gatewayv1.AllowedRoutes{Kinds: []gatewayv1.RouteGroupKind{{Kind: "TCPRoute"}}}
				return l
			}()},
			want:  map[string]listenerWant{"a": {"Accepted": "True/Accepted", "ResolvedRefs": "False/InvalidRouteKinds", "Programmed": "False/Invalid"}},
			kinds: map[string][]string{"a": {}},
		},
		"missing Secret": {
			listeners: []gatewayv1.Listener{httpsListener("a", 443, "", secretRef("", "nope"))},
			want:      map[string]listenerWant{"a": {"Accepted": "True/Accepted", "ResolvedRefs": "False/InvalidCertificateRef", "Programmed": "False/Invalid"}},
		},
		"no certificateRefs": {
			listeners: []gatewayv1.Listener{httpsListener("a", 443, "")},
			want:      map[string]listenerWant{"a": {"ResolvedRefs": "False/InvalidCertificateRef"}},
		},
		"certificate of another kind": {
			listeners: []gatewayv1.Listener{httpsListener("a", 443, "", gatewayv1.SecretObjectReference{Kind: ptr(gatewayv1.Kind("ConfigMap")), Name: "wild"})},
			want:      map[string]listenerWant{"a": {"ResolvedRefs": "False/InvalidCertificateRef"}},
		},
		"Secret of another namespace without a grant": {
			listeners: []gatewayv1.Listener{httpsListener("a", 443, "x.example.com", secretRef("certs", "shared"))},
			edit:      func(in *Inputs) { in.Secrets = append(in.Secrets, tlsSecret(t, "certs", "shared", "x.example.com")) },
			want:      map[string]listenerWant{"a": {"ResolvedRefs": "False/RefNotPermitted", "Programmed": "False/Invalid"}},
		},
		"Secret of another namespace with a grant": {
			listeners: []gatewayv1.Listener{httpsListener("a", 443, "x.example.com", secretRef("certs", "shared"))},
			edit: func(in *Inputs) {
				in.Secrets = append(in.Secrets, tlsSecret(t, "certs", "shared", "x.example.com"))
				grant(in)
			},
			want: map[string]listenerWant{"a": ok},
		},
		"hostname conflict": {
			listeners: []gatewayv1.Listener{httpListener("a", 80, "a.example.com"), httpListener("b", 80, "a.example.com"), httpListener("c", 80, "c.example.com")},
			want: map[string]listenerWant{
				"a": {"Conflicted": "True/HostnameConflict", "Accepted": "False/HostnameConflict", "Programmed": "False/HostnameConflict"},
				"b": {"Conflicted": "True/HostnameConflict", "Accepted": "False/HostnameConflict", "Programmed": "False/HostnameConflict"},
				"c": ok,
			},
		},
		"protocol conflict": {
			listeners: []gatewayv1.Listener{httpListener("a", 443, ""), httpsListener("b", 443, "", secretRef("", "wild"))},
			want: map[string]listenerWant{
				"a": {"Conflicted": "True/ProtocolConflict", "Accepted": "False/ProtocolConflict", "Programmed": "False/ProtocolConflict"},
				"b": {"Conflicted": "True/ProtocolConflict", "Accepted": "False/ProtocolConflict", "Programmed": "False/ProtocolConflict"},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			in.Gateways[0].Spec.Listeners = tc.listeners
			if tc.edit != nil {
				tc.edit(&in)
			}
			st := Build(in).Status.Gateways[gwKey]
			if len(st.Listeners) != len(tc.listeners) {
				t.Fatalf("%d listener statuses; want %d", len(st.Listeners), len(tc.listeners))
			}
			for _, ls := range st.Listeners {
				for typ, w := range tc.want[string(ls.Name)] {
					c := cond(t, ls.Conditions, string(typ))
					if got := string(c.Status) + "/" + c.Reason; got != w {
						t.Errorf("listener %s %s = %s (%s); want %s", ls.Name, typ, got, c.Message, w)
					}
					if c.ObservedGeneration != 3 {
						t.Errorf("listener %s %s: observedGeneration %d", ls.Name, typ, c.ObservedGeneration)
					}
				}
				if want, ok := tc.kinds[string(ls.Name)]; ok {
					var got []string
					for _, k := range ls.SupportedKinds {
						got = append(got, string(k.Kind))
					}
					if len(got) != len(want) || (len(want) > 0 && got[0] != want[0]) {
						t.Errorf("listener %s supportedKinds %v; want %v", ls.Name, got, want)
					}
				}
			}
		})
	}
}

func TestGatewayModel(t *testing.T) {
	in := world(t)
	v6 := netip.MustParseAddr("2001:db8::10")
	in.Addresses[gwKey] = append(in.Addresses[gwKey], v6)
	in.Gateways[0].Spec.Listeners = append(in.Gateways[0].Spec.Listeners,
		httpsListener("https-shop", 443, "shop.example.org", secretRef("", "shop")))
	in.Secrets = append(in.Secrets, tlsSecret(t, "infra", "shop", "shop.example.org"))
	in.TLSRoutes = append(in.TLSRoutes, testTLSRoute("t", nil, backendRef("", "web", 8080, nil)))
	res := Build(in)
	if len(res.Config.Gateways) != 1 {
		t.Fatalf("model gateways %+v; want one", res.Config.Gateways)
	}
	g := res.Config.Gateways[0]
	if g.Name != "gw.infra.gw" || g.Group != "edge" || g.Origin != "infra/gw" || !g.Created.Equal(testNow.Add(-3600e9)) {
		t.Fatalf("gateway %s group %s origin %s created %v", g.Name, g.Group, g.Origin, g.Created)
	}
	var names []string
	for _, l := range g.Listeners {
		names = append(names, l.Name)
	}
	want := []string{"http-80", "http-80-1", "https-443", "https-443-1", "tls-8443", "tls-8443-1"}
	if len(names) != len(want) {
		t.Fatalf("listeners %v; want %v", names, want)
	}
	for i, l := range g.Listeners {
		if l.Name != want[i] {
			t.Fatalf("listeners %v; want %v", names, want)
		}
		wantVIP := netip.MustParseAddr(testVIP)
		if i%2 == 1 {
			wantVIP = v6
		}
		if l.VIP != wantVIP {
			t.Errorf("listener %s VIP %s; want %s", l.Name, l.VIP, wantVIP)
		}
	}
	https := g.Listeners[2]
	if https.Protocol != model.HTTPS || len(https.TLS) != 2 ||
		https.TLS[0].ServerNames[0] != "*.example.com" || https.TLS[0].Certificate != "cert.infra.wild" ||
		https.TLS[1].ServerNames[0] != "shop.example.org" || https.TLS[1].Certificate != "cert.infra.shop" {
		t.Fatalf("https listener %+v; want the two listeners' certificates by hostname", https)
	}
	if len(res.Config.Certificates) != 2 || res.Config.Certificates[0].Name != "cert.infra.shop" || res.Config.Certificates[0].Key.Empty() {
		t.Fatalf("certificates %+v; want cert.infra.shop and cert.infra.wild with keys", res.Config.Certificates)
	}
	if g.Listeners[4].Protocol != model.TLS {
		t.Fatalf("listener %s protocol %s; want TLS", g.Listeners[4].Name, g.Listeners[4].Protocol)
	}
}

func TestHTTPSListenerWithoutHostnameServesCertificateNames(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{httpsListener("a", 443, "", secretRef("", "multi"))}
	in.Secrets = append(in.Secrets, tlsSecret(t, "infra", "multi", "a.example.com", "b.example.com"))
	res := Build(in)
	l := res.Config.Gateways[0].Listeners[0]
	if len(l.TLS) != 1 || len(l.TLS[0].ServerNames) != 2 || l.TLS[0].ServerNames[1] != "b.example.com" {
		t.Fatalf("TLS %+v; want the certificate's DNS names", l.TLS)
	}
	// A certificate without DNS names (as in GatewaySecretReferenceGrant*)
	// is served for every server name: the model's default chain.
	in.Secrets[len(in.Secrets)-1] = tlsSecret(t, "infra", "multi")
	res = Build(in)
	st := res.Status.Gateways[gwKey]
	wantCond(t, st.Listeners[0].Conditions, "ResolvedRefs", true, string(gatewayv1.ListenerReasonResolvedRefs))
	wantCond(t, st.Listeners[0].Conditions, "Programmed", true, string(gatewayv1.ListenerReasonProgrammed))
	l = res.Config.Gateways[0].Listeners[0]
	if len(l.TLS) != 1 || l.TLS[0].ServerNames != nil || l.TLS[0].Certificate != "cert.infra.multi" {
		t.Fatalf("TLS %+v; want cert.infra.multi without server names", l.TLS)
	}
	if r := model.Resolve(res.Config, model.Options{}); len(r.Problems) > 0 || len(r.Listeners) != 1 {
		t.Fatalf("the model refuses the default chain: %v", r.Problems)
	}
}

// TestSharedPortWithoutHostnamesServesNeither: two HTTPS listeners on a
// port without hostname are indistinct; neither serves its certificate
// (the first used to keep the default chain; the spec picks no winner).
func TestSharedPortWithoutHostnamesServesNeither(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{
		httpsListener("a", 443, "", secretRef("", "first")),
		httpsListener("b", 443, "", secretRef("", "second")),
	}
	in.Secrets = append(in.Secrets, tlsSecret(t, "infra", "first"), tlsSecret(t, "infra", "second"))
	res := Build(in)
	if len(res.Config.Gateways) != 0 || len(res.Config.Certificates) != 0 {
		t.Fatalf("gateways %+v, certificates %d; want none served", res.Config.Gateways, len(res.Config.Certificates))
	}
	for _, l := range res.Status.Gateways[gwKey].Listeners {
		wantCond(t, l.Conditions, "Conflicted", true, string(gatewayv1.ListenerReasonHostnameConflict))
	}
}

// TestSharedPortServesEachServerNameOnce: an HTTPS listener without a
// hostname serves its certificate's names, except those an earlier
// listener on the port already serves.
func TestSharedPortServesEachServerNameOnce(t *testing.T) {
	in := world(t)
	in.Gateways[0].Spec.Listeners = []gatewayv1.Listener{
		httpsListener("a", 443, "a.example.com", secretRef("", "a")),
		httpsListener("any", 443, "", secretRef("", "multi")),
	}
	in.Secrets = append(in.Secrets, tlsSecret(t, "infra", "a", "a.example.com"), tlsSecret(t, "infra", "multi", "a.example.com", "b.example.com"))
	tls := Build(in).Config.Gateways[0].Listeners[0].TLS
	want := []model.SNICertificate{{ServerNames: []string{"a.example.com"}, Certificate: "cert.infra.a"}, {ServerNames: []string{"b.example.com"}, Certificate: "cert.infra.multi"}}
	if len(tls) != 2 || tls[0].Certificate != want[0].Certificate || tls[1].ServerNames[0] != "b.example.com" || len(tls[1].ServerNames) != 1 {
		t.Fatalf("TLS %+v; want %+v", tls, want)
	}
}
