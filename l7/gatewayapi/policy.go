package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/model"
)

// Policy levels, least specific first: a more specific one is applied
// later and so replaces what a less specific one set.
const (
	levelGateway = iota
	levelListener
	levelRoute
	levelRule
)

// attachment is one targetRef of a policy, resolved.
type attachment struct {
	policy *tlbv1alpha1.TrafficPolicy
	fn     functions
	ref    gatewayv1.LocalPolicyTargetReferenceWithSectionName
	level  int
	// services are indexes in Config.Services; routes, when set, limits
	// a rule target to the routes of that rule in each service.
	services []int
	rule     string
	cond     metav1.Condition
}

// policies attaches the TrafficPolicies to the services of their targets
// and computes their status.
func (b *builder) policies() {
	var all []*attachment
	claimed := map[string]*tlbv1alpha1.TrafficPolicy{}
	for _, p := range sortedByAge(b.in.TrafficPolicies) {
		fn, msg := b.policyFunctions(p)
		for i, ref := range p.Spec.TargetRefs {
			a := &attachment{policy: p, fn: fn, ref: ref}
			switch {
			case msg != "":
				a.cond = b.policyCond(p, false, gatewayv1.PolicyReasonInvalid, msg)
			default:
				b.resolveTarget(a, fmt.Sprintf("spec.targetRefs[%d]", i))
			}
			// Targets are local to the policy's namespace: two policies
			// of different namespaces never target the same object.
			key := fmt.Sprintf("%s/%s/%s/%s", p.Namespace, ref.Kind, ref.Name, ptrStr(ref.SectionName))
			if a.cond.Reason == "" {
				if first, taken := claimed[key]; taken {
					a.cond = b.policyCond(p, false, gatewayv1.PolicyReasonConflicted,
						fmt.Sprintf("TrafficPolicy %s/%s, older, already targets %s", first.Namespace, first.Name, key))
				} else {
					claimed[key] = p
				}
			}
			all = append(all, a)
		}
	}
	// Less specific first; within a level the oldest last, so it wins.
	order := slices.Clone(all)
	slices.SortStableFunc(order, func(x, y *attachment) int {
		return cmp.Or(cmp.Compare(x.level, y.level), -x.policy.CreationTimestamp.Compare(y.policy.CreationTimestamp.Time))
	})
	for _, a := range order {
		if a.cond.Reason == "" {
			b.apply(a)
		}
	}
	for _, a := range all {
		b.ancestorStatus(a)
	}
}

// ancestorStatus adds a's condition to its policy's status under each of
// its ancestors. The spec (apis/v1/policy_types.go, PolicyAncestorStatus):
// implementations "SHOULD use Gateway as the PolicyAncestorStatus object":
// a Gateway target is its own ancestor; a route target has the Gateways
// of ours it names as parents. A target that is not found has no Gateway:
// its own reference stands in. The ancestors are a map (ancestorRef and
// controllerName): a second target under one Gateway keeps the first
// condition unless it is the first that fails.
func (b *builder) ancestorStatus(a *attachment) {
	k := nn(a.policy.Namespace, a.policy.Name)
	st := b.out.Status.TrafficPolicies[k]
	ns := gatewayv1.Namespace(a.policy.Namespace)
	group, kind := a.ref.Group, a.ref.Kind
	refs := []gatewayv1.ParentReference{{Group: &group, Kind: &kind, Namespace: &ns, Name: a.ref.Name, SectionName: a.ref.SectionName}}
	if gws := b.routeGateways[routeKey{string(kind), targetName(a)}]; kind != kindGateway && len(gws) > 0 {
		refs = refs[:0]
		for _, gw := range gws {
			gns, g, gk := gatewayv1.Namespace(gw.Namespace), gatewayv1.Group(gatewayv1.GroupName), gatewayv1.Kind(kindGateway)
			refs = append(refs, gatewayv1.ParentReference{Group: &g, Kind: &gk, Namespace: &gns, Name: gatewayv1.ObjectName(gw.Name)})
		}
	}
	for _, ref := range refs {
		i := slices.IndexFunc(st.Ancestors, func(x gatewayv1.PolicyAncestorStatus) bool { return sameParentRef(x.AncestorRef, ref) })
		switch {
		case i < 0:
			st.Ancestors = append(st.Ancestors, gatewayv1.PolicyAncestorStatus{
				AncestorRef: ref, ControllerName: ControllerName, Conditions: []metav1.Condition{a.cond}})
		case a.cond.Status != metav1.ConditionTrue && st.Ancestors[i].Conditions[0].Status == metav1.ConditionTrue:
			st.Ancestors[i].Conditions = []metav1.Condition{a.cond}
		}
	}
	b.out.Status.TrafficPolicies[k] = st
}

// targetName is the namespace/name of a's target (local to the policy).
func targetName(a *attachment) types.NamespacedName {
	return nn(a.policy.Namespace, string(a.ref.Name))
}

// sameParentRef reports whether two references name the same object and
// section.
func sameParentRef(x, y gatewayv1.ParentReference) bool {
	return ptrStr(x.Group) == ptrStr(y.Group) && ptrStr(x.Kind) == ptrStr(y.Kind) && ptrStr(x.Namespace) == ptrStr(y.Namespace) &&
		x.Name == y.Name && ptrStr(x.SectionName) == ptrStr(y.SectionName)
}

func ptrStr[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

func (b *builder) policyCond(p *tlbv1alpha1.TrafficPolicy, ok bool, reason gatewayv1.PolicyConditionReason, msg string) metav1.Condition {
	return condition(gatewayv1.PolicyConditionAccepted, ok, reason, msg, p.Generation, b.in.Now)
}

// resolveTarget finds the services a's target covers; it sets a.cond
// when the target is not found or not valid.
func (b *builder) resolveTarget(a *attachment, f string) {
	p, ref := a.policy, a.ref
	section := ptrStr(ref.SectionName)
	if ref.Group != gatewayv1.GroupName {
		a.cond = b.policyCond(p, false, gatewayv1.PolicyReasonInvalid, fmt.Sprintf("%s.group: want %s", f, gatewayv1.GroupName))
		return
	}
	notFound := func(what string) {
		a.cond = b.policyCond(p, false, gatewayv1.PolicyReasonTargetNotFound, fmt.Sprintf("%s: %s", f, what))
	}
	switch ref.Kind {
	case kindGateway:
		g := b.gws[nn(p.Namespace, string(ref.Name))]
		if g == nil {
			notFound(fmt.Sprintf("no Gateway %s/%s of a class of %s", p.Namespace, ref.Name, ControllerName))
			return
		}
		refs := map[string]bool{}
		a.level = levelGateway
		for _, l := range g.listeners {
			if section == "" || string(l.spec.Name) == section {
				for ai := range max(len(g.addrs), 1) {
					refs[l.modelListener(ai)] = true
				}
			}
		}
		if section != "" {
			a.level = levelListener
			if len(refs) == 0 {
				notFound(fmt.Sprintf("Gateway %s/%s has no listener %q", p.Namespace, ref.Name, section))
				return
			}
		}
		for i, s := range b.out.Config.Services {
			for _, lr := range s.Listeners {
				if lr.Gateway == g.name && refs[lr.Listener] {
					a.services = append(a.services, i)
					break
				}
			}
		}
	case kindHTTPRoute, kindGRPCRoute:
		rk := routeKey{string(ref.Kind), nn(p.Namespace, string(ref.Name))}
		if !b.routeOurs(rk) {
			notFound(fmt.Sprintf("no %s %s/%s attached to a Gateway of %s", ref.Kind, p.Namespace, ref.Name, ControllerName))
			return
		}
		a.level, a.services = levelRoute, b.routeServices[rk]
		if section != "" {
			a.level, a.rule = levelRule, section
			if !b.routeHasRule(rk, section) {
				notFound(fmt.Sprintf("%s %s/%s has no rule named %q", ref.Kind, p.Namespace, ref.Name, section))
				return
			}
			if a.fn.jwt != nil {
				a.cond = b.policyCond(p, false, gatewayv1.PolicyReasonInvalid, "spec.jwt: applies to whole routes; target the route without sectionName")
				return
			}
		}
	default:
		a.cond = b.policyCond(p, false, gatewayv1.PolicyReasonInvalid, fmt.Sprintf("%s.kind: want Gateway, HTTPRoute or GRPCRoute, got %q", f, ref.Kind))
	}
}

// routeOurs reports whether the route has status from us (a parent
// Gateway of ours).
func (b *builder) routeOurs(rk routeKey) bool {
	if rk.kind == kindHTTPRoute {
		_, ok := b.out.Status.HTTPRoutes[rk.name]
		return ok
	}
	_, ok := b.out.Status.GRPCRoutes[rk.name]
	return ok
}

// routeHasRule reports whether a route has a rule named rule.
func (b *builder) routeHasRule(rk routeKey, rule string) bool {
	if rk.kind == kindHTTPRoute {
		for _, r := range b.in.HTTPRoutes {
			if r.Namespace == rk.name.Namespace && r.Name == rk.name.Name {
				return slices.ContainsFunc(r.Spec.Rules, func(x gatewayv1.HTTPRouteRule) bool { return ptrStr(x.Name) == rule })
			}
		}
		return false
	}
	for _, r := range b.in.GRPCRoutes {
		if r.Namespace == rk.name.Namespace && r.Name == rk.name.Name {
			return slices.ContainsFunc(r.Spec.Rules, func(x gatewayv1.GRPCRouteRule) bool { return ptrStr(x.Name) == rule })
		}
	}
	return false
}

// inRule reports whether a model route comes from the rule named rule
// (see ruleRouteName).
func inRule(r model.Route, rule string) bool {
	rest, ok := strings.CutPrefix(r.Name, rule)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	digits := strings.TrimPrefix(rest, "-")
	return digits != rest && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// apply sets a's functions on its services unless that makes one of them
// fail the model's checks; a then is Invalid, naming the problem.
func (b *builder) apply(a *attachment) {
	next := map[int]model.Service{}
	for _, i := range a.services {
		s := b.out.Config.Services[i]
		s.Routes = cloneRoutes(s.Routes)
		if a.rule == "" {
			a.fn.applyService(&s)
		} else {
			for j := range s.Routes {
				if inRule(s.Routes[j], a.rule) {
					a.fn.applyRoute(&s.Routes[j], true)
				}
			}
		}
		if msg := newProblems(b.out.Config.Services[i], s); msg != "" {
			a.cond = b.policyCond(a.policy, false, gatewayv1.PolicyReasonInvalid, fmt.Sprintf("on %s: %s", s.Name, msg))
			return
		}
		next[i] = s
	}
	for i, s := range next {
		b.out.Config.Services[i] = s
	}
	a.cond = b.policyCond(a.policy, true, gatewayv1.PolicyReasonAccepted, "accepted")
}

// newProblems returns the model check errors of after that before did
// not have, joined; "" when none.
func newProblems(before, after model.Service) string {
	had := map[string]bool{}
	if err := model.CheckService(before); err != nil {
		for _, l := range strings.Split(err.Error(), "\n") {
			had[l] = true
		}
	}
	var out []string
	if err := model.CheckService(after); err != nil {
		for _, l := range strings.Split(err.Error(), "\n") {
			if !had[l] {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "; ")
}
