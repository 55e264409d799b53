package gatewayapi

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// listener is one listener of a Gateway while Build runs.
type listener struct {
	spec     gatewayv1.Listener
	protocol model.Protocol // "" when unsupported
	// kinds are the route kinds that may attach (status.supportedKinds).
	kinds []gatewayv1.RouteGroupKind
	// accepted, resolved and conflicted are the listener's conditions.
	accepted, resolved, conflicted metav1.Condition
	certs                          []model.SNICertificate
	// certSANs are the DNS names of the served certificates (HTTPS; nil
	// when one of them names none: it serves every name).
	certSANs []string
	// clientCert is the client certificate validation of spec.tls.frontend
	// (HTTPS); caPartial: some of its CA references could not be used,
	// which ResolvedRefs says, and the listener is served with the others.
	clientCert  *model.ClientCertificate
	caPartial   bool
	passthrough []model.SNITarget
	// terminate: a TLS listener of mode Terminate, which serves certs
	// and forwards its TLSRoutes' connections in plain TCP.
	terminate bool
	// forward are the clusters of a TCP or UDP listener: its oldest
	// route's.
	forward  []model.WeightedCluster
	attached int32
}

// Route kinds, in the group gateway.networking.k8s.io.
const (
	kindHTTPRoute = "HTTPRoute"
	kindGRPCRoute = "GRPCRoute"
	kindTLSRoute  = "TLSRoute"
	kindTCPRoute  = "TCPRoute"
	kindUDPRoute  = "UDPRoute"
	kindGateway   = "Gateway"
	kindService   = "Service"
	kindSecret    = "Secret"
)

// newListener validates listener i of gw: protocol, TLS mode,
// certificates, route kinds. Conflicts are marked afterwards.
func (b *builder) newListener(gw *gatewayv1.Gateway, i int) *listener {
	spec := gw.Spec.Listeners[i]
	gen, now := gw.Generation, b.in.Now
	l := &listener{spec: spec, kinds: []gatewayv1.RouteGroupKind{}}
	l.accepted = condition(gatewayv1.ListenerConditionAccepted, true, gatewayv1.ListenerReasonAccepted, "accepted", gen, now)
	l.resolved = condition(gatewayv1.ListenerConditionResolvedRefs, true, gatewayv1.ListenerReasonResolvedRefs, "references resolved", gen, now)
	l.conflicted = condition(gatewayv1.ListenerConditionConflicted, false, gatewayv1.ListenerReasonNoConflicts, "no conflicts", gen, now)
	f := fmt.Sprintf("spec.listeners[%d]", i)
	mode := gatewayv1.TLSModeTerminate
	if spec.TLS != nil && spec.TLS.Mode != nil {
		mode = *spec.TLS.Mode
	}
	var supported []string
	switch spec.Protocol {
	case gatewayv1.HTTPProtocolType:
		l.protocol, supported = model.HTTP, []string{kindHTTPRoute, kindGRPCRoute}
	case gatewayv1.HTTPSProtocolType:
		l.protocol, supported = model.HTTPS, []string{kindHTTPRoute, kindGRPCRoute}
		if mode != gatewayv1.TLSModeTerminate {
			l.accepted = condition(gatewayv1.ListenerConditionAccepted, false, gatewayv1.ListenerReasonUnsupportedValue, f+".tls.mode: HTTPS listeners terminate TLS; use protocol TLS for Passthrough", gen, now)
			return l // in a mode we do not serve, no route kind is supported
		}
	case gatewayv1.TLSProtocolType:
		// Passthrough, or Terminate (tlsterminate.go): TLSRoutes either way.
		l.protocol, supported = model.TLS, []string{kindTLSRoute}
		l.terminate = mode == gatewayv1.TLSModeTerminate
	case gatewayv1.TCPProtocolType:
		l.protocol, supported = model.TCP, []string{kindTCPRoute}
	case gatewayv1.UDPProtocolType:
		l.protocol, supported = model.UDP, []string{kindUDPRoute}
	default:
		l.accepted = condition(gatewayv1.ListenerConditionAccepted, false, gatewayv1.ListenerReasonUnsupportedProtocol,
			fmt.Sprintf("%s.protocol: %q is not supported; use HTTP, HTTPS, TLS, TCP or UDP", f, spec.Protocol), gen, now)
		return l
	}
	l.kinds = routeKinds(spec.AllowedRoutes, supported, func(msg string) {
		l.resolved = condition(gatewayv1.ListenerConditionResolvedRefs, false, gatewayv1.ListenerReasonInvalidRouteKinds, f+".allowedRoutes.kinds: "+msg, gen, now)
	})
	if l.protocol == model.HTTPS && mode == gatewayv1.TLSModeTerminate {
		b.listenerCertificates(gw, l, f)
		b.listenerClientCertificate(gw, l)
	}
	if l.terminate {
		b.listenerCertificates(gw, l, f)
	}
	return l
}

// routeKinds returns the kinds of supported that allowed lets attach;
// bad is called when allowed names a kind outside supported.
func routeKinds(allowed *gatewayv1.AllowedRoutes, supported []string, bad func(string)) []gatewayv1.RouteGroupKind {
	group := gatewayv1.Group(gatewayv1.GroupName)
	out := []gatewayv1.RouteGroupKind{}
	if allowed == nil || len(allowed.Kinds) == 0 {
		for _, k := range supported {
			out = append(out, gatewayv1.RouteGroupKind{Group: &group, Kind: gatewayv1.Kind(k)})
		}
		return out
	}
	var invalid []string
	for _, k := range allowed.Kinds {
		g := gatewayv1.GroupName
		if k.Group != nil {
			g = string(*k.Group)
		}
		if g == gatewayv1.GroupName && contains(supported, string(k.Kind)) {
			out = append(out, gatewayv1.RouteGroupKind{Group: &group, Kind: k.Kind})
		} else {
			invalid = append(invalid, g+"/"+string(k.Kind))
		}
	}
	if len(invalid) > 0 {
		bad(fmt.Sprintf("%s not supported on this listener (supported: %s)", strings.Join(invalid, ", "), strings.Join(supported, ", ")))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// allowsKind reports whether a route of kind may attach to l.
func (l *listener) allowsKind(kind string) bool {
	for _, k := range l.kinds {
		if string(k.Kind) == kind {
			return true
		}
	}
	return false
}

// attachable reports whether routes may attach to l.
func (l *listener) attachable() bool {
	return l.accepted.Status == metav1.ConditionTrue && l.conflicted.Status == metav1.ConditionFalse
}

// programmable reports whether l goes into the model: its references
// resolved, or only some of its allowed route kinds are unsupported. The
// spec (ListenerStatus.SupportedKinds): "If both valid and invalid Route
// kinds are specified, the implementation MUST reference the valid Route
// kinds that have been specified"; the listener serves those (it used to
// report routes of the valid kind Accepted and serve nothing).
func (l *listener) programmable() bool {
	if !l.attachable() {
		return false
	}
	return l.resolved.Status == metav1.ConditionTrue || l.caPartial ||
		(l.resolved.Reason == string(gatewayv1.ListenerReasonInvalidRouteKinds) && len(l.kinds) > 0)
}

// modelListener is the model listener name of l on the gateway's address
// number ai: listeners sharing a port share it.
func (l *listener) modelListener(ai int) string {
	n := fmt.Sprintf("%s-%d", strings.ToLower(string(l.protocol)), l.spec.Port)
	if ai > 0 {
		n += fmt.Sprintf("-%d", ai)
	}
	return n
}

// hostname is the listener's hostname, "" for any.
func (l *listener) hostname() string {
	if l.spec.Hostname == nil {
		return ""
	}
	return string(*l.spec.Hostname)
}

// markConflicts marks every listener that shares a port with one of
// another protocol (ProtocolConflict; the model serves one protocol per
// port, so HTTPS and TLS cannot share one either), or with the same
// protocol and hostname (HostnameConflict). A conflicted listener is not
// accepted, and neither is the one it conflicts with. The spec
// (apis/v1/gateway_types.go, GatewaySpec.Listeners, "Handling indistinct
// Listeners"): "The implementation MUST NOT pick one conflicting Listener
// as the winner. ALL indistinct Listeners must not be accepted for
// processing."
func markConflicts(ls []*listener) {
	protocols := map[int32][]model.Protocol{}
	hosts := map[string]int{}
	var candidates []*listener
	for _, l := range ls {
		if l.protocol == "" || l.accepted.Status != metav1.ConditionTrue {
			continue
		}
		candidates = append(candidates, l)
		if !slices.Contains(protocols[l.spec.Port], l.protocol) {
			protocols[l.spec.Port] = append(protocols[l.spec.Port], l.protocol)
		}
		hosts[conflictKey(l)]++
	}
	for _, l := range candidates {
		c := l.conflicted
		switch {
		case len(protocols[l.spec.Port]) > 1:
			c.Status, c.Reason = metav1.ConditionTrue, string(gatewayv1.ListenerReasonProtocolConflict)
			c.Message = fmt.Sprintf("port %d is asked for as %s by several listeners; none of them is served", l.spec.Port, joinProtocols(protocols[l.spec.Port]))
		case hosts[conflictKey(l)] > 1:
			c.Status, c.Reason = metav1.ConditionTrue, string(gatewayv1.ListenerReasonHostnameConflict)
			c.Message = fmt.Sprintf("several %s listeners on port %d have hostname %q; none of them is served", l.protocol, l.spec.Port, l.hostname())
		default:
			continue
		}
		l.conflicted = c
		// As the conformance suite expects of a conflicted listener:
		// not accepted, for the same reason.
		a := c
		a.Type, a.Status = string(gatewayv1.ListenerConditionAccepted), metav1.ConditionFalse
		l.accepted = a
	}
}

// conflictKey is what two listeners of one Gateway must not share.
func conflictKey(l *listener) string {
	return fmt.Sprintf("%d|%s|%s", l.spec.Port, l.protocol, l.hostname())
}

func joinProtocols(ps []model.Protocol) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, " and ")
}

// listenerStatus is l's status once routes have attached.
func (b *builder) listenerStatus(g *gateway, l *listener) gatewayv1.ListenerStatus {
	gen, now := g.obj.Generation, b.in.Now
	var prog metav1.Condition
	switch {
	case l.conflicted.Status == metav1.ConditionTrue:
		prog = condition(gatewayv1.ListenerConditionProgrammed, false, gatewayv1.ListenerConditionReason(l.conflicted.Reason), l.conflicted.Message, gen, now)
	case !l.programmable() || !g.isAccepted():
		prog = condition(gatewayv1.ListenerConditionProgrammed, false, gatewayv1.ListenerReasonInvalid, "the listener is not valid", gen, now)
	case !g.programmed():
		prog = condition(gatewayv1.ListenerConditionProgrammed, false, gatewayv1.ListenerReasonPending, "the Gateway has not got its VIP", gen, now)
	default:
		prog = condition(gatewayv1.ListenerConditionProgrammed, true, gatewayv1.ListenerReasonProgrammed, "programmed", gen, now)
	}
	return gatewayv1.ListenerStatus{
		Name:           l.spec.Name,
		SupportedKinds: l.kinds,
		AttachedRoutes: l.attached,
		Conditions:     []metav1.Condition{l.accepted, prog, l.resolved, l.conflicted},
	}
}
