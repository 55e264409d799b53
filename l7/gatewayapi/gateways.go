package gatewayapi

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// gateway is a Gateway of one of our classes while Build runs.
type gateway struct {
	obj   *gatewayv1.Gateway
	name  string // the model gateway
	group string
	// accepted is the Gateway's Accepted condition; routes attach only to
	// an accepted Gateway.
	accepted  metav1.Condition
	addrs     []netip.Addr
	listeners []*listener
	// sets are the ListenerSets attached, in precedence order.
	sets []*listenerSet
}

// gateways validates every Gateway of our classes and its listeners.
func (b *builder) gateways() {
	for _, gw := range sortedByAge(b.in.Gateways) {
		cls := string(gw.Spec.GatewayClassName)
		group, ours := b.classGroup[cls]
		if !ours && !b.classBad[cls] {
			continue
		}
		g := &gateway{obj: gw, name: gatewayModelName(gw.Namespace, gw.Name), group: fleetGroup(gw, group)}
		g.addrs = b.in.Addresses[nn(gw.Namespace, gw.Name)]
		for i := range gw.Spec.Listeners {
			g.listeners = append(g.listeners, b.newListener(gw, i))
		}
		markConflicts(g.listeners)
		g.accepted = b.gatewayAccepted(g)
		b.gws[nn(gw.Namespace, gw.Name)] = g
		b.gwOrder = append(b.gwOrder, g)
	}
}

// gatewayAccepted is the Accepted condition of g: its class, its
// requested addresses, then its listeners.
func (b *builder) gatewayAccepted(g *gateway) metav1.Condition {
	gen, now := g.obj.Generation, b.in.Now
	if b.classBad[string(g.obj.Spec.GatewayClassName)] {
		return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonInvalidParameters,
			fmt.Sprintf("GatewayClass %q has invalid parameters", g.obj.Spec.GatewayClassName), gen, now)
	}
	if msg := cmp.Or(invalidParameters(g.obj), invalidFleet(g.obj)); msg != "" {
		return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonInvalidParameters, msg, gen, now)
	}
	for i, a := range g.obj.Spec.Addresses {
		if a.Type != nil && *a.Type != gatewayv1.IPAddressType {
			return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonUnsupportedAddress,
				fmt.Sprintf("spec.addresses[%d].type: only %s is supported, got %q", i, gatewayv1.IPAddressType, *a.Type), gen, now)
		}
		if _, err := netip.ParseAddr(a.Value); a.Value != "" && err != nil {
			return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonUnsupportedAddress,
				fmt.Sprintf("spec.addresses[%d].value: %q is not an IP address", i, a.Value), gen, now)
		}
	}
	// The spec (GatewaySpec.Listeners): the ListenersNotValid message
	// "SHOULD clearly indicate in the Message which Listeners are
	// conflicted, and which are Accepted".
	var valid, invalid []string
	for _, l := range g.listeners {
		if l.accepted.Status == metav1.ConditionTrue {
			valid = append(valid, string(l.spec.Name))
		} else {
			invalid = append(invalid, fmt.Sprintf("%s (%s)", l.spec.Name, l.accepted.Reason))
		}
	}
	switch {
	case len(valid) == 0:
		return condition(gatewayv1.GatewayConditionAccepted, false, gatewayv1.GatewayReasonListenersNotValid,
			"no listener is valid: "+strings.Join(invalid, ", "), gen, now)
	case len(invalid) > 0:
		return condition(gatewayv1.GatewayConditionAccepted, true, gatewayv1.GatewayReasonListenersNotValid,
			fmt.Sprintf("listeners not accepted: %s; accepted: %s", strings.Join(invalid, ", "), strings.Join(valid, ", ")), gen, now)
	}
	return condition(gatewayv1.GatewayConditionAccepted, true, gatewayv1.GatewayReasonAccepted, "accepted", gen, now)
}

// isAccepted reports whether routes may attach to g.
func (g *gateway) isAccepted() bool { return g.accepted.Status == metav1.ConditionTrue }

// programmed reports whether g is served: accepted, with an address. A
// requested address that was not assigned does not stop it: the spec
// (GatewaySpec.Addresses) asks that it be reported in the Gateway's
// conditions (programmedCondition), and the addresses it has are served
// (one missing address used to take the whole Gateway down).
func (g *gateway) programmed() bool {
	return g.isAccepted() && len(g.addrs) > 0
}

// status is g's status once every route has attached.
func (b *builder) gatewayStatus(g *gateway) gatewayv1.GatewayStatus {
	prog := b.programmedCondition(g) // addresses.go
	st := gatewayv1.GatewayStatus{Conditions: []metav1.Condition{g.accepted, prog}, AttachedListenerSets: g.attachedListenerSets()}
	if c, ok := b.insecureFrontend(g); ok {
		st.Conditions = append(st.Conditions, c)
	}
	ipType := gatewayv1.IPAddressType
	for _, a := range g.addrs {
		st.Addresses = append(st.Addresses, gatewayv1.GatewayStatusAddress{Type: &ipType, Value: a.String()})
	}
	for _, l := range g.listeners {
		st.Listeners = append(st.Listeners, b.listenerStatus(g, l))
	}
	return st
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// model returns the model gateway of g: one listener per address and
// port of its programmed listeners. ok is false when g is not served.
func (g *gateway) model() (model.Gateway, bool) {
	if !g.programmed() {
		return model.Gateway{}, false
	}
	mg := model.Gateway{
		Name: g.name, Group: g.group,
		Origin:  model.Origin(g.obj.Namespace + "/" + g.obj.Name),
		Created: g.obj.CreationTimestamp.UTC(),
	}
	byName := map[string]*model.Listener{}
	sni := map[string]map[string]bool{} // model listener -> SNI names taken
	hostnames, ids := listenerHostnames(g), listenerIDs(g)
	for _, l := range g.servedListeners() {
		if !l.programmable() {
			continue
		}
		for ai, a := range g.addrs {
			n := l.modelListener(ai)
			ml, ok := byName[n]
			if !ok {
				ml = &model.Listener{Name: n, VIP: a, Port: uint32(l.spec.Port), Protocol: l.protocol, ClientCertificate: l.clientCert}
				byName[n] = ml
			}
			if sni[n] == nil {
				sni[n] = map[string]bool{}
			}
			for _, c := range l.httpsCerts() {
				c.Listener, c.Hostname = ids[l], l.hostname()
				if c.Hostname == "" && len(c.ServerNames) > 0 {
					if c.ServerNames = withoutHostnames(c.ServerNames, hostnames[n]); len(c.ServerNames) == 0 {
						continue
					}
				}
				if len(c.ServerNames) == 0 {
					// The default chain (every other name): the first
					// listener on the port to want it keeps it.
					if !sni[n][""] {
						sni[n][""] = true
						ml.TLS = append(ml.TLS, model.SNICertificate{Certificate: c.Certificate, Listener: c.Listener, Hostname: c.Hostname})
					}
					continue
				}
				if names := unclaimed(c.ServerNames, sni[n]); len(names) > 0 {
					ml.TLS = append(ml.TLS, model.SNICertificate{ServerNames: names, Certificate: c.Certificate, Listener: c.Listener, Hostname: c.Hostname})
				}
			}
			ml.Passthrough = append(ml.Passthrough, firstClaims(l.passthrough, sni[n])...)
			if len(ml.Forward) == 0 {
				ml.Forward = l.forward
			}
		}
	}
	for _, ml := range byName {
		// A passthrough listener without routes has nothing to forward
		// to; leaving it out keeps the model from rejecting the gateway.
		if (ml.Protocol == model.TLS && len(ml.Passthrough) == 0) || ((ml.Protocol == model.TCP || ml.Protocol == model.UDP) && len(ml.Forward) == 0) {
			continue
		}
		mg.Listeners = append(mg.Listeners, *ml)
	}
	if len(mg.Listeners) == 0 {
		return model.Gateway{}, false
	}
	slices.SortFunc(mg.Listeners, func(x, y model.Listener) int { return cmp.Compare(x.Name, y.Name) })
	return mg, true
}

// firstClaims returns targets without the server names already in taken
// (an older route, or an earlier listener on the port, has them), and
// adds theirs to taken. Certificates of HTTPS listeners sharing a port
// are thinned the same way (the first listener keeps a name). A target left without names is dropped;
// one left with only "*" (a TLSRoute without hostnames) becomes the
// model's entry without names, which takes every other server name.
func firstClaims(targets []model.SNITarget, taken map[string]bool) []model.SNITarget {
	var out []model.SNITarget
	for _, t := range targets {
		if names := unclaimed(t.ServerNames, taken); len(names) > 0 {
			t.ServerNames = names
			if slices.Equal(names, []string{"*"}) {
				t.ServerNames = nil // the model's entry for every other name
			}
			out = append(out, t)
		}
	}
	return out
}

// unclaimed returns the names not in taken, and adds them to it.
func unclaimed(names []string, taken map[string]bool) []string {
	var out []string
	for _, n := range names {
		if !taken[n] {
			taken[n] = true
			out = append(out, n)
		}
	}
	return out
}
