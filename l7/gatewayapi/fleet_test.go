package gatewayapi

import (
	"bytes"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// fleetWorld is the test world with a second Gateway infra/own (HTTPS
// for own.example.org with the Secret infra/own, VIP 203.0.113.20), its
// fleet annotation set to fleet ("" for none), and the HTTPRoute app/shop
// on it; app/web stays on infra/gw.
func fleetWorld(t *testing.T, fleet string) (Inputs, *corev1.Secret) {
	t.Helper()
	in := world(t)
	own := testGateway("infra", "own", allNamespaces(httpsListener("https", 443, "own.example.org", secretRef("", "own"))))
	if fleet != "" {
		own.Annotations = map[string]string{api.AnnotationFleet: fleet}
	}
	secret := tlsSecret(t, "infra", "own", "own.example.org")
	shop := testHTTPRoute("shop")
	shop.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "own", "")}
	in.Gateways = append(in.Gateways, own)
	in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("web"), shop)
	in.Secrets = append(in.Secrets, secret)
	in.Addresses[nn("infra", "own")] = []netip.Addr{netip.MustParseAddr("203.0.113.20")}
	return in, secret
}

// groupOf returns the group of model gateway name in cfg.
func groupOf(cfg model.Config, name string) string {
	for _, g := range cfg.Gateways {
		if g.Name == name {
			return g.Group
		}
	}
	return "(none)"
}

// TestFleetGroupServesGateway: which gateway group serves which Gateway.
// Without the annotation (or "shared") the class's group serves both;
// "dedicated" moves infra/own, its listeners and the services of the
// routes on it, to FleetGroup("edge", "infra", "own") and leaves infra/gw
// where it was; an unknown value is refused naming the annotation.
func TestFleetGroupServesGateway(t *testing.T) {
	const own = "edge.infra.own"
	for name, tc := range map[string]struct {
		fleet     string
		wantGroup string
		accepted  bool
	}{
		"no annotation": {"", "edge", true},
		"shared":        {api.FleetShared, "edge", true},
		"dedicated":     {api.FleetDedicated, own, true},
		"unknown value": {"mine", "(none)", false},
	} {
		t.Run(name, func(t *testing.T) {
			in, _ := fleetWorld(t, tc.fleet)
			res := Build(in)
			if got := groupOf(res.Config, "gw.infra.own"); got != tc.wantGroup {
				t.Errorf("infra/own served by group %q, want %q", got, tc.wantGroup)
			}
			if got := groupOf(res.Config, "gw.infra.gw"); got != "edge" {
				t.Errorf("infra/gw served by group %q, want edge", got)
			}
			st := res.Status.Gateways[nn("infra", "own")]
			if !tc.accepted {
				wantCond(t, st.Conditions, string(gatewayv1.GatewayConditionAccepted), false, string(gatewayv1.GatewayReasonInvalidParameters))
				if msg := cond(t, st.Conditions, string(gatewayv1.GatewayConditionAccepted)).Message; !strings.Contains(msg, api.AnnotationFleet) || !strings.Contains(msg, `"mine"`) {
					t.Errorf("Accepted message %q does not name the annotation and its value", msg)
				}
				return
			}
			wantCond(t, st.Conditions, string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonAccepted))
			for _, s := range res.Config.Services {
				wantSvc := "edge"
				if strings.Contains(s.Name, ".shop") {
					wantSvc = tc.wantGroup
				}
				if s.Group != wantSvc {
					t.Errorf("service %s in group %q, want %q", s.Name, s.Group, wantSvc)
				}
			}
		})
	}
}

// TestFleetIsolation: with infra/own dedicated, the xDS resources of the
// class's group hold none of its listeners, routes or key, and those of
// its own group hold only its: each VIP's keys only on its gateways.
func TestFleetIsolation(t *testing.T) {
	in, ownSecret := fleetWorld(t, api.FleetDedicated)
	res := Build(in)
	r := model.Resolve(res.Config, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("resolve: %v", r.Problems)
	}
	ownKey := ownSecret.Data[corev1.TLSPrivateKeyKey]
	own := FleetGroup("edge", "infra", "own")
	for group, want := range map[string]struct {
		vip    string
		hasKey bool
	}{"edge": {testVIP, false}, own: {"203.0.113.20", true}} {
		ls := translate.Listeners(r, group)
		if len(ls) == 0 {
			t.Fatalf("group %s: no listener", group)
		}
		for _, l := range ls {
			if a := l.GetAddress().GetSocketAddress().GetAddress(); a != want.vip {
				t.Errorf("group %s: listener %s on %s, want only %s", group, l.Name, a, want.vip)
			}
		}
		var hasKey bool
		for _, s := range translate.Secrets(r, group) {
			hasKey = hasKey || bytes.Contains([]byte(s.String()), bytes.TrimSpace(ownKey[30:90]))
		}
		if hasKey != want.hasKey {
			t.Errorf("group %s: holds infra/own's private key = %v, want %v", group, hasKey, want.hasKey)
		}
		var routes []string
		for _, rc := range translate.ListenerRoutes(r, group) {
			for _, vh := range rc.VirtualHosts {
				routes = append(routes, vh.Domains...)
			}
		}
		if got := slices.Contains(routes, "own.example.org"); got != want.hasKey {
			t.Errorf("group %s: serves own.example.org = %v, want %v (domains %v)", group, got, want.hasKey, routes)
		}
	}
}

// TestFleetGroupName: the dedicated group is "<group>.<namespace>.<name>";
// a longer one keeps its head and a hash, within 63 characters, and two
// long names stay apart.
func TestFleetGroupName(t *testing.T) {
	if got := FleetGroup("edge", "shop", "web"); got != "edge.shop.web" {
		t.Errorf("FleetGroup = %q, want edge.shop.web", got)
	}
	long := strings.Repeat("a", 60)
	a, b := FleetGroup("edge", "shop", long+"1"), FleetGroup("edge", "shop", long+"2")
	if len(a) > 63 || len(b) > 63 || a == b {
		t.Errorf("long names: %q and %q (want distinct, at most 63 characters)", a, b)
	}
}
