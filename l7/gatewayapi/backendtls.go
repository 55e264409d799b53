package gatewayapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// BackendTLSPolicy: TLS from Envoy to a Service's endpoints. A policy
// targets Services of its namespace (a port by sectionName, its name);
// the routes' upstreams to a targeted port speak TLS with the policy's
// hostname as SNI, verified against its CA bundle (ConfigMaps, key
// ca.crt) and its hostname or subjectAltNames. A policy that cannot be
// served (no usable CA, the System CAs, a target another older policy
// has) is not Accepted; a route's backend under a policy without a usable
// CA is not forwarded to in plain text: its share answers 500. The
// policy's ancestors are the Gateways of the routes using its targets.

// backendTLS is one BackendTLSPolicy while Build runs.
type backendTLS struct {
	policy *gatewayv1.BackendTLSPolicy
	// accepted and resolved are its conditions.
	accepted, resolved metav1.Condition
	// tls is what its targets' upstreams get; nil when not served.
	tls *model.UpstreamTLS
}

// backendTLSKey names a target: a Service's port by name, "" for all.
type backendTLSKey struct {
	service types.NamespacedName
	section string
}

// backendTLSPolicies validates every BackendTLSPolicy and indexes the
// accepted (or CA-less) ones by target; the oldest policy of a target
// has it, a younger one is Conflicted. Runs before the routes.
func (b *builder) backendTLSPolicies() {
	for _, p := range sortedByAge(b.in.BackendTLSPolicies) {
		bt := b.newBackendTLS(p)
		b.btlsOrder = append(b.btlsOrder, bt)
		if bt.accepted.Reason == string(gatewayv1.PolicyReasonInvalid) {
			continue
		}
		var taken []string
		var mine []backendTLSKey
		for _, ref := range p.Spec.TargetRefs {
			if ref.Group != "" || ref.Kind != kindService {
				continue
			}
			k := backendTLSKey{nn(p.Namespace, string(ref.Name)), ptrStr(ref.SectionName)}
			if first := b.btls[k]; first != nil && first != bt {
				taken = append(taken, fmt.Sprintf("BackendTLSPolicy %s, older, already targets Service %s%s", first.policy.Name, ref.Name, sectionSuffix(k.section)))
				continue
			}
			mine = append(mine, k)
		}
		if len(taken) > 0 {
			bt.accepted = condition(gatewayv1.PolicyConditionAccepted, false, gatewayv1.PolicyReasonConflicted, taken[0], p.Generation, b.in.Now)
			bt.tls = nil
			continue
		}
		for _, k := range mine {
			b.btls[k] = bt
		}
	}
}

func sectionSuffix(s string) string {
	if s == "" {
		return ""
	}
	return " port " + s
}

// newBackendTLS checks p alone: its targets' kinds, its CA references,
// its hostname and subjectAltNames.
func (b *builder) newBackendTLS(p *gatewayv1.BackendTLSPolicy) *backendTLS {
	gen, now := p.Generation, b.in.Now
	bt := &backendTLS{
		policy:   p,
		accepted: condition(gatewayv1.PolicyConditionAccepted, true, gatewayv1.PolicyReasonAccepted, "accepted", gen, now),
		resolved: condition(gatewayv1.BackendTLSPolicyConditionResolvedRefs, true, gatewayv1.BackendTLSPolicyReasonResolvedRefs, "references resolved", gen, now),
	}
	invalid := func(msg string) *backendTLS {
		bt.accepted = condition(gatewayv1.PolicyConditionAccepted, false, gatewayv1.PolicyReasonInvalid, msg, gen, now)
		return bt
	}
	for i, ref := range p.Spec.TargetRefs {
		if ref.Group != "" || ref.Kind != kindService {
			return invalid(fmt.Sprintf("spec.targetRefs[%d]: kind %s is not supported; a BackendTLSPolicy targets core Services", i, groupKind(string(ref.Group), string(ref.Kind))))
		}
	}
	v := p.Spec.Validation
	if v.WellKnownCACertificates != nil {
		return invalid(fmt.Sprintf("spec.validation.wellKnownCACertificates: %q is not supported; name the CA bundle in caCertificateRefs", *v.WellKnownCACertificates))
	}
	u := &model.UpstreamTLS{SNI: string(v.Hostname)}
	for i, san := range v.SubjectAltNames {
		switch san.Type {
		case gatewayv1.HostnameSubjectAltNameType:
			u.SubjectAltNames = append(u.SubjectAltNames, string(san.Hostname))
		case gatewayv1.URISubjectAltNameType:
			u.URISubjectAltNames = append(u.URISubjectAltNames, string(san.URI))
		default:
			return invalid(fmt.Sprintf("spec.validation.subjectAltNames[%d].type: %q is not supported", i, san.Type))
		}
	}
	refs := make([]caRef, len(v.CACertificateRefs))
	for i, r := range v.CACertificateRefs {
		refs[i] = caRef{group: string(r.Group), kind: string(r.Kind), name: string(r.Name), field: fmt.Sprintf("spec.validation.caCertificateRefs[%d]", i)}
	}
	bundle, problems := b.caBundle(p.Namespace, "BackendTLSPolicy", refs)
	if len(problems) > 0 {
		reason := gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef
		if problems[0].fault == caKind {
			reason = gatewayv1.BackendTLSPolicyReasonInvalidKind
		}
		bt.resolved = condition(gatewayv1.BackendTLSPolicyConditionResolvedRefs, false, reason, caMessages(problems), gen, now)
	}
	if bundle == nil {
		bt.accepted = condition(gatewayv1.PolicyConditionAccepted, false, gatewayv1.BackendTLSPolicyReasonNoValidCACertificate,
			"spec.validation.caCertificateRefs: no CA bundle could be used; the targets' backends are not forwarded to", gen, now)
		return bt
	}
	u.CA = bundle
	bt.tls = u
	return bt
}

// backendTLSFor returns the policy of port portName of Service svc: the
// one naming the port, else the one naming the Service; nil for none.
func (b *builder) backendTLSFor(svc types.NamespacedName, portName string) *backendTLS {
	if portName != "" {
		if bt := b.btls[backendTLSKey{svc, portName}]; bt != nil {
			return bt
		}
	}
	return b.btls[backendTLSKey{svc, ""}]
}

// noteBackendTLS records the Gateways of parents as those of the
// Services a route's upstreams resolved to: the ancestors of the
// BackendTLSPolicies targeting them (Accepted or not).
func (b *builder) noteBackendTLS(services []types.NamespacedName, parents []parent) {
	for _, svc := range services {
		for _, p := range parents {
			gw := nn(p.g.obj.Namespace, p.g.obj.Name)
			if !slices.Contains(b.serviceGateways[svc], gw) {
				b.serviceGateways[svc] = append(b.serviceGateways[svc], gw)
			}
		}
	}
}

// backendTLSStatus writes every policy's status: its conditions under
// each Gateway ancestor: the Gateways of the HTTPRoutes and GRPCRoutes
// of ours forwarding to a Service it targets (none when no route does).
func (b *builder) backendTLSStatus() {
	for _, bt := range b.btlsOrder {
		st := gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{}}
		var ancestors []types.NamespacedName
		for _, ref := range bt.policy.Spec.TargetRefs {
			for _, gw := range b.serviceGateways[nn(bt.policy.Namespace, string(ref.Name))] {
				if !slices.Contains(ancestors, gw) {
					ancestors = append(ancestors, gw)
				}
			}
		}
		slices.SortFunc(ancestors, func(x, y types.NamespacedName) int { return strings.Compare(x.String(), y.String()) })
		for _, gw := range ancestors {
			gns, g, gk := gatewayv1.Namespace(gw.Namespace), gatewayv1.Group(gatewayv1.GroupName), gatewayv1.Kind(kindGateway)
			st.Ancestors = append(st.Ancestors, gatewayv1.PolicyAncestorStatus{
				AncestorRef:    gatewayv1.ParentReference{Group: &g, Kind: &gk, Namespace: &gns, Name: gatewayv1.ObjectName(gw.Name)},
				ControllerName: ControllerName,
				Conditions:     []metav1.Condition{bt.accepted, bt.resolved},
			})
		}
		b.out.Status.BackendTLSPolicies[nn(bt.policy.Namespace, bt.policy.Name)] = st
	}
}

// tlsTag is a short hash of an upstream's TLS settings, part of its
// name: a policy added, changed or removed makes a new Envoy cluster
// rather than changing one in place. Envoy keeps serving a changed
// cluster's old version (plain text, or the old CA) until the new one has
// its endpoints, and a control plane whose endpoints did not change sends
// none: the change would wait for Envoy's initial fetch timeout (15 s)
// per change. A new name is subscribed to and answered at once.
func tlsTag(u *model.UpstreamTLS) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(u.SNI), u.CA, []byte(strings.Join(u.SubjectAltNames, ",")), []byte(strings.Join(u.URISubjectAltNames, ","))} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":"))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))[:8]
}
