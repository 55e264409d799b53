package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// route is what attachment needs of a route of any kind.
type route struct {
	kind      string
	namespace string
	gen       int64
	hostnames []gatewayv1.Hostname
	parents   []gatewayv1.ParentReference
}

// parent is the outcome of one parentRef of a route to a Gateway of ours.
type parent struct {
	ref      gatewayv1.ParentReference
	g        *gateway
	accepted metav1.Condition
	matches  []match
	// set is the ListenerSet (of g) a parentRef of that kind names.
	set *listenerSet
}

// match is a listener a route attached to and the hostnames it serves
// there (nil: any).
type match struct {
	l     *listener
	hosts []string
	// isolated: more specific listeners take every host, so the route
	// serves nothing on l (see isolate).
	isolated bool
	// uncovered are the hosts the HTTPS listener's certificate does not
	// name.
	uncovered []string
}

// attach resolves the parentRefs of r that name Gateways of our classes.
// Listeners count the route as attached only when routeOK (the route
// itself is valid); a parent then carries accepted True.
func (b *builder) attach(r route, routeOK bool) []parent {
	var out []parent
	counted := map[*listener]bool{}
	for _, ref := range r.parents {
		p, ok := b.parentOf(r.namespace, ref)
		if !ok {
			continue
		}
		reason, msg := b.matchListeners(r, &p)
		if reason == gatewayv1.RouteReasonAccepted {
			p.accepted = condition(gatewayv1.RouteConditionAccepted, true, reason, msg, r.gen, b.in.Now)
			if routeOK {
				for _, m := range p.matches {
					if !counted[m.l] {
						counted[m.l] = true
						m.l.attached++
					}
					m.l.serveNames(m.uncovered)
				}
			}
		} else {
			p.accepted = condition(gatewayv1.RouteConditionAccepted, false, reason, msg, r.gen, b.in.Now)
			p.matches = nil
		}
		out = append(out, p)
	}
	return out
}

// matchListeners finds the listeners of p.g that r attaches to through
// p.ref, and says why none when it does not.
func (b *builder) matchListeners(r route, p *parent) (gatewayv1.RouteConditionReason, string) {
	if !p.g.isAccepted() {
		return gatewayv1.RouteReasonNoMatchingParent, fmt.Sprintf("Gateway %s/%s is not accepted", p.g.obj.Namespace, p.g.obj.Name)
	}
	if why := p.setNotAttached(); why != "" {
		return gatewayv1.RouteReasonNoMatchingParent, why
	}
	var named []*listener
	for _, l := range p.candidates() {
		if p.ref.SectionName != nil && *p.ref.SectionName != l.spec.Name {
			continue
		}
		if p.ref.Port != nil && *p.ref.Port != l.spec.Port {
			continue
		}
		named = append(named, l)
	}
	if len(named) == 0 {
		return gatewayv1.RouteReasonNoMatchingParent, "no listener matches the parentRef's sectionName and port"
	}
	var allowed []*listener
	for _, l := range named {
		if l.attachable() && l.allowsKind(r.kind) && b.allowsNamespace(p.namespace(), l, r.namespace) {
			allowed = append(allowed, l)
		}
	}
	if len(allowed) == 0 {
		return gatewayv1.RouteReasonNotAllowedByListeners, fmt.Sprintf("no listener allows %ss of namespace %s", r.kind, r.namespace)
	}
	var uncovered []string
	for _, l := range allowed {
		hosts, ok := intersect(r.hostnames, l.hostname())
		if !ok {
			continue
		}
		hosts, isolated := isolate(p.g, l, hosts)
		// Attachment depends on allowedRoutes and parentRefs alone
		// (ListenerStatus.AttachedRoutes: "based solely on the
		// combination of the AllowedRoutes field [...] and the Route's
		// ParentRefs field"): a name the listener's certificate does not
		// cover is served and attached, and the route says that clients
		// verifying the certificate will refuse it.
		out := l.uncovered(hosts)
		for _, h := range out {
			uncovered = append(uncovered, fmt.Sprintf("%s (listener %s)", h, l.spec.Name))
		}
		p.matches = append(p.matches, match{l: l, hosts: hosts, isolated: isolated, uncovered: out})
	}
	switch {
	case len(p.matches) == 0:
		return gatewayv1.RouteReasonNoMatchingListenerHostname, "no listener hostname matches the route's hostnames"
	case len(uncovered) > 0:
		return gatewayv1.RouteReasonAccepted, "accepted; outside the listener's certificate (clients that verify it fail the handshake): " +
			strings.Join(uncovered, ", ")
	}
	return gatewayv1.RouteReasonAccepted, "accepted"
}

// intersect returns the hostnames a route serves on a listener with
// hostname lh ("" for any): nil for any host. ok is false when none.
func intersect(routeHosts []gatewayv1.Hostname, lh string) (_ []string, ok bool) {
	if len(routeHosts) == 0 {
		if lh == "" {
			return nil, true
		}
		return []string{lh}, true
	}
	var out []string
	for _, rh := range routeHosts {
		h := strings.ToLower(string(rh))
		switch {
		case lh == "" || h == lh || wildcardMatches(lh, h):
			out = append(out, h)
		case isWildcard(h) && wildcardMatches(h, lh):
			out = append(out, lh)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out, len(out) > 0
}

func isWildcard(h string) bool { return strings.HasPrefix(h, "*.") }

// wildcardMatches reports whether the wildcard w ("*.example.com")
// covers h: h ends in w's suffix with at least one more label. A
// wildcard h matches when its own suffix is longer.
func wildcardMatches(w, h string) bool {
	suffix, ok := strings.CutPrefix(w, "*")
	if !ok {
		return false
	}
	return strings.HasSuffix(h, suffix) && len(h) > len(suffix) && strings.TrimPrefix(h, "*") != suffix
}

// slot is one model service of a route: the listeners of one gateway
// group on which it serves the same hostnames.
type slot struct {
	group string
	hosts []string
	refs  []model.ListenerRef
}

// slots groups the programmed listeners of the accepted parents by
// gateway group and hostnames, sorted.
func slots(parents []parent) []slot {
	idx := map[string]*slot{}
	for _, p := range parents {
		if !p.g.programmed() {
			continue
		}
		for _, m := range p.matches {
			if !m.l.programmable() || m.isolated {
				continue
			}
			key := p.g.group + "|" + strings.Join(m.hosts, ",")
			s := idx[key]
			if s == nil {
				s = &slot{group: p.g.group, hosts: m.hosts}
				idx[key] = s
			}
			for ai := range p.g.addrs {
				ref := model.ListenerRef{Gateway: p.g.name, Listener: m.l.modelListener(ai)}
				if !slices.Contains(s.refs, ref) {
					s.refs = append(s.refs, ref)
				}
			}
		}
	}
	out := make([]slot, 0, len(idx))
	for _, s := range idx {
		slices.SortFunc(s.refs, func(a, b model.ListenerRef) int { return cmp.Compare(a.String(), b.String()) })
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b slot) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(strings.Join(a.hosts, ","), strings.Join(b.hosts, ",")))
	})
	return out
}

// parentStatus is the status of a route under p with ResolvedRefs res;
// its parentRef is the spec's, as written.
func parentStatus(p parent, res metav1.Condition) gatewayv1.RouteParentStatus {
	return gatewayv1.RouteParentStatus{
		ParentRef:      p.ref,
		ControllerName: ControllerName,
		Conditions:     []metav1.Condition{p.accepted, res},
	}
}
