package gatewayapi

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ListenerSets (GEP-1713, gateway.networking.k8s.io/v1 in v1.6): a
// ListenerSet adds listeners to a Gateway of ours that allows it
// (spec.allowedListeners, default None). Its listeners are served on the
// Gateway's addresses beside the Gateway's own, merged in the spec's
// precedence: the Gateway's listeners first, then the sets oldest first,
// then by namespace/name. A set's listener that conflicts with one
// earlier in that order (same port and another protocol, or same port,
// protocol and hostname) is Conflicted and not served; the earlier one
// keeps serving (ListenerSetSpec.Listeners: "the first Listener in the
// precedence list MUST be accepted"). Routes attach to a set's listeners
// only through a parentRef of kind ListenerSet; a parentRef to the
// Gateway reaches the Gateway's own listeners alone.

// kindListenerSet is the ListenerSet kind of gateway.networking.k8s.io.
const kindListenerSet = "ListenerSet"

// reasonParentNotProgrammed is the ListenerSet Programmed reason the
// spec names (ListenerSetConditionProgrammed) without a constant.
const reasonParentNotProgrammed gatewayv1.ListenerSetConditionReason = "ParentNotProgrammed"

// listenerSet is a ListenerSet whose parent is a Gateway of ours while
// Build runs.
type listenerSet struct {
	obj *gatewayv1.ListenerSet
	g   *gateway
	// accepted is the set's Accepted condition: the Gateway allows it,
	// is accepted, and one of the set's listeners is valid.
	accepted  metav1.Condition
	listeners []*listener
}

// isAccepted reports whether the set is attached to its Gateway.
func (s *listenerSet) isAccepted() bool { return s.accepted.Status == metav1.ConditionTrue }

// listenerSets attaches every ListenerSet naming a Gateway of ours, in
// the spec's precedence, and checks its listeners against those before
// it. Sets naming another controller's Gateway are left alone.
func (b *builder) listenerSets() {
	b.out.Status.ListenerSets = map[types.NamespacedName]gatewayv1.ListenerSetStatus{}
	b.sets = map[types.NamespacedName]*listenerSet{}
	for _, ls := range sortedByAge(b.in.ListenerSets) {
		g := b.setParent(ls)
		if g == nil {
			continue
		}
		s := &listenerSet{obj: ls, g: g}
		s.accepted = b.attachSet(s)
		if s.isAccepted() {
			g.sets = append(g.sets, s)
		}
		b.sets[nn(ls.Namespace, ls.Name)] = s
		b.setOrder = append(b.setOrder, s)
	}
}

// setParent returns the Gateway of ours that ls names, or nil.
func (b *builder) setParent(ls *gatewayv1.ListenerSet) *gateway {
	ref := ls.Spec.ParentRef
	if (ref.Group != nil && *ref.Group != gatewayv1.GroupName) || (ref.Kind != nil && *ref.Kind != kindGateway) {
		return nil
	}
	ns := ls.Namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	return b.gws[nn(ns, string(ref.Name))]
}

// attachSet validates s's listeners against its Gateway and the sets
// before it and returns its Accepted condition.
func (b *builder) attachSet(s *listenerSet) metav1.Condition {
	gen, now, g := s.obj.Generation, b.in.Now, s.g
	gwName := g.obj.Namespace + "/" + g.obj.Name
	if !b.allowsSet(g.obj, s.obj.Namespace) {
		return condition(gatewayv1.ListenerSetConditionAccepted, false, gatewayv1.ListenerSetReasonNotAllowed,
			fmt.Sprintf("Gateway %s does not allow ListenerSets of namespace %s (its spec.allowedListeners)", gwName, s.obj.Namespace), gen, now)
	}
	if !g.isAccepted() {
		return condition(gatewayv1.ListenerSetConditionAccepted, false, gatewayv1.ListenerSetReasonParentNotAccepted,
			fmt.Sprintf("Gateway %s is not accepted", gwName), gen, now)
	}
	stand := setGateway(s.obj)
	for i := range stand.Spec.Listeners {
		s.listeners = append(s.listeners, b.newListener(stand, i))
	}
	markSetConflicts(g, s.listeners)
	var valid, invalid []string
	for _, l := range s.listeners {
		if l.programmable() {
			valid = append(valid, string(l.spec.Name))
		} else {
			invalid = append(invalid, fmt.Sprintf("%s (%s)", l.spec.Name, firstFalse(l)))
		}
	}
	switch {
	case len(valid) == 0:
		return condition(gatewayv1.ListenerSetConditionAccepted, false, gatewayv1.ListenerSetReasonListenersNotValid,
			"no listener is valid: "+strings.Join(invalid, ", "), gen, now)
	case len(invalid) > 0:
		return condition(gatewayv1.ListenerSetConditionAccepted, true, gatewayv1.ListenerSetReasonListenersNotValid,
			fmt.Sprintf("listeners not accepted: %s; accepted: %s", strings.Join(invalid, ", "), strings.Join(valid, ", ")), gen, now)
	}
	return condition(gatewayv1.ListenerSetConditionAccepted, true, gatewayv1.ListenerSetReasonAccepted, "attached to Gateway "+gwName, gen, now)
}

// firstFalse is the reason a listener is not valid: its Accepted reason,
// else its ResolvedRefs reason.
func firstFalse(l *listener) string {
	if l.accepted.Status != metav1.ConditionTrue {
		return l.accepted.Reason
	}
	return l.resolved.Reason
}

// setGateway is a stand-in Gateway of kind ListenerSet holding ls's
// listeners, for the listener checks Gateways and sets share: its
// namespace is the set's (certificate references without a namespace,
// ReferenceGrants from kind ListenerSet), its generation the set's.
func setGateway(ls *gatewayv1.ListenerSet) *gatewayv1.Gateway {
	gw := &gatewayv1.Gateway{
		TypeMeta:   metav1.TypeMeta{Kind: kindListenerSet, APIVersion: gatewayv1.GroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{Namespace: ls.Namespace, Name: ls.Name, Generation: ls.Generation},
	}
	for _, e := range ls.Spec.Listeners {
		gw.Spec.Listeners = append(gw.Spec.Listeners, gatewayv1.Listener(e))
	}
	return gw
}

// referrerKind is the kind a ReferenceGrant must name to let gw's
// listeners refer to another namespace: ListenerSet for a set's
// stand-in (setGateway), else Gateway. The spec (ListenerSet):
// "ReferenceGrants applied to a Gateway are not inherited by child
// ListenerSets".
func referrerKind(gw *gatewayv1.Gateway) string {
	if gw.Kind == kindListenerSet {
		return kindListenerSet
	}
	return kindGateway
}

// allowsSet reports whether gw's spec.allowedListeners lets ListenerSets
// of namespace ns attach (default None).
func (b *builder) allowsSet(gw *gatewayv1.Gateway, ns string) bool {
	al := gw.Spec.AllowedListeners
	if al == nil || al.Namespaces == nil || al.Namespaces.From == nil {
		return false
	}
	switch *al.Namespaces.From {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSame:
		return ns == gw.Namespace
	case gatewayv1.NamespacesFromSelector:
		if al.Namespaces.Selector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(al.Namespaces.Selector)
		n := b.namespaces[ns]
		return err == nil && n != nil && sel.Matches(labels.Set(n.Labels))
	}
	return false
}

// servedListeners are g's own listeners, then those of its attached
// sets in precedence order: everything served on g's addresses.
func (g *gateway) servedListeners() []*listener {
	out := g.listeners
	for _, s := range g.sets {
		out = append(out[:len(out):len(out)], s.listeners...)
	}
	return out
}

// markSetConflicts marks each listener of a set, in order, that
// conflicts with one before it: one of g's own (conflicted among
// themselves or not), of a set attached to g before, or an earlier
// listener of the same set. The first keeps serving, as the spec's
// precedence asks.
func markSetConflicts(g *gateway, set []*listener) {
	var taken []*listener
	for _, l := range g.listeners {
		if l.protocol != "" && (l.attachable() || l.conflicted.Status == metav1.ConditionTrue) {
			taken = append(taken, l)
		}
	}
	for _, s := range g.sets {
		for _, l := range s.listeners {
			if l.attachable() {
				taken = append(taken, l)
			}
		}
	}
	for _, l := range set {
		if l.protocol == "" || l.accepted.Status != metav1.ConditionTrue {
			continue
		}
		reason, msg := conflictWith(taken, l)
		if reason == "" {
			taken = append(taken, l)
			continue
		}
		l.conflicted.Status, l.conflicted.Reason, l.conflicted.Message = metav1.ConditionTrue, string(reason), msg
		a := l.conflicted
		a.Type, a.Status = string(gatewayv1.ListenerConditionAccepted), metav1.ConditionFalse
		l.accepted = a
	}
}

// conflictWith returns why l conflicts with the first listener of taken
// it cannot share a port with, "" when none.
func conflictWith(taken []*listener, l *listener) (gatewayv1.ListenerConditionReason, string) {
	for _, o := range taken {
		switch {
		case o.spec.Port != l.spec.Port:
		case o.protocol != l.protocol:
			return gatewayv1.ListenerReasonProtocolConflict,
				fmt.Sprintf("port %d is served as %s by a listener of higher precedence (the Gateway's or an older ListenerSet's)", l.spec.Port, o.protocol)
		case o.hostname() == l.hostname():
			return gatewayv1.ListenerReasonHostnameConflict,
				fmt.Sprintf("a listener of higher precedence (the Gateway's or an older ListenerSet's) serves %s on port %d with hostname %q", l.protocol, l.spec.Port, l.hostname())
		}
	}
	return "", ""
}

// listenerSetStatuses computes the status of every set naming a Gateway
// of ours, once routes have attached.
func (b *builder) listenerSetStatuses() {
	for _, s := range b.setOrder {
		b.out.Status.ListenerSets[nn(s.obj.Namespace, s.obj.Name)] = b.listenerSetStatus(s)
	}
}

// listenerSetStatus is s's status: Programmed follows Accepted, then
// the Gateway's Programmed; each listener's conditions observe the
// set's generation.
func (b *builder) listenerSetStatus(s *listenerSet) gatewayv1.ListenerSetStatus {
	gen, now := s.obj.Generation, b.in.Now
	var prog metav1.Condition
	switch {
	case !s.isAccepted():
		prog = s.accepted
		prog.Type = string(gatewayv1.ListenerSetConditionProgrammed)
	case !s.g.programmed():
		prog = condition(gatewayv1.ListenerSetConditionProgrammed, false, reasonParentNotProgrammed,
			fmt.Sprintf("Gateway %s/%s is not programmed", s.g.obj.Namespace, s.g.obj.Name), gen, now)
	default:
		prog = condition(gatewayv1.ListenerSetConditionProgrammed, true, gatewayv1.ListenerSetReasonProgrammed, "programmed", gen, now)
	}
	st := gatewayv1.ListenerSetStatus{Conditions: []metav1.Condition{s.accepted, prog}}
	for _, l := range s.listeners {
		ls := b.listenerStatus(s.g, l)
		for i := range ls.Conditions {
			ls.Conditions[i].ObservedGeneration = gen
		}
		st.Listeners = append(st.Listeners, gatewayv1.ListenerEntryStatus(ls))
	}
	return st
}

// attachedListenerSets is the Gateway's status.attachedListenerSets:
// the number of sets attached, nil when it allows none and has none.
func (g *gateway) attachedListenerSets() *int32 {
	al := g.obj.Spec.AllowedListeners
	allows := al != nil && al.Namespaces != nil && al.Namespaces.From != nil && *al.Namespaces.From != gatewayv1.NamespacesFromNone
	if !allows && len(g.sets) == 0 {
		return nil
	}
	n := int32(len(g.sets))
	return &n
}

// parentOf resolves a route's parentRef (the route in namespace ns) to
// a Gateway of ours or a ListenerSet attached to one; ok is false for
// any other parent, which other controllers answer for.
func (b *builder) parentOf(ns string, ref gatewayv1.ParentReference) (_ parent, ok bool) {
	if ref.Group != nil && *ref.Group != gatewayv1.GroupName {
		return parent{}, false
	}
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	key := nn(ns, string(ref.Name))
	switch {
	case ref.Kind == nil || *ref.Kind == kindGateway:
		g := b.gws[key]
		return parent{ref: ref, g: g}, g != nil
	case *ref.Kind == kindListenerSet:
		s := b.sets[key]
		if s == nil {
			return parent{}, false
		}
		return parent{ref: ref, g: s.g, set: s}, true
	}
	return parent{}, false
}

// candidates are the listeners p's parentRef can reach: the set's
// listeners for a ListenerSet, the Gateway's own otherwise.
func (p *parent) candidates() []*listener {
	if p.set != nil {
		return p.set.listeners
	}
	return p.g.listeners
}

// namespace is the namespace allowedRoutes "Same" means on p's
// listeners: the set's, or the Gateway's.
func (p *parent) namespace() string {
	if p.set != nil {
		return p.set.obj.Namespace
	}
	return p.g.obj.Namespace
}

// setNotAttached says why routes cannot attach to p's set, "" when they
// can (or p is a Gateway).
func (p *parent) setNotAttached() string {
	if p.set == nil || p.set.isAccepted() {
		return ""
	}
	return fmt.Sprintf("ListenerSet %s/%s is not accepted (%s)", p.set.obj.Namespace, p.set.obj.Name, p.set.accepted.Reason)
}
