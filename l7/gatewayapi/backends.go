package gatewayapi

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/kubeobj"
	"github.com/tlbproject/tlb/l7/model"
)

// routeBuild collects what one route produces besides its model routes:
// the upstreams its backendRefs resolve to, and the first reason its
// references or values are not usable.
type routeBuild struct {
	b     *builder
	kind  string
	ns    string
	gen   int64
	http2 bool
	// proto is the protocol of the Service ports backendRefs name (UDP
	// for a UDPRoute, else TCP).
	proto corev1.Protocol
	ups   []model.Upstream
	upIdx map[string]bool
	// webSocket are the upstreams whose Service port speaks WebSocket
	// (appProtocol kubernetes.io/ws).
	webSocket map[string]bool
	// refReason/refMsg is the first unresolved reference (ResolvedRefs).
	refReason gatewayv1.RouteConditionReason
	refMsg    string
	// unsupported is the first value the model cannot carry (Accepted
	// False, UnsupportedValue).
	unsupported string
	// services are the Services its upstreams resolved to (the ancestors
	// of BackendTLSPolicies are their routes' Gateways).
	services []types.NamespacedName
}

func (b *builder) newRouteBuild(kind, ns string, gen int64, http2 bool) *routeBuild {
	return &routeBuild{b: b, kind: kind, ns: ns, gen: gen, http2: http2, proto: corev1.ProtocolTCP, upIdx: map[string]bool{}, webSocket: map[string]bool{}}
}

func (rb *routeBuild) badRef(reason gatewayv1.RouteConditionReason, msg string) {
	if rb.refReason == "" {
		rb.refReason, rb.refMsg = reason, msg
	}
}

func (rb *routeBuild) unsupportedf(format string, a ...any) {
	if rb.unsupported == "" {
		rb.unsupported = fmt.Sprintf(format, a...)
	}
}

// ok reports whether the route may be accepted.
func (rb *routeBuild) ok() bool { return rb.unsupported == "" }

// resolvedRefs is the route's ResolvedRefs condition.
func (rb *routeBuild) resolvedRefs() metav1.Condition {
	if rb.refReason != "" {
		return condition(gatewayv1.RouteConditionResolvedRefs, false, rb.refReason, rb.refMsg, rb.gen, rb.b.in.Now)
	}
	return condition(gatewayv1.RouteConditionResolvedRefs, true, gatewayv1.RouteReasonResolvedRefs, "references resolved", rb.gen, rb.b.in.Now)
}

// accepted overrides the parents' Accepted when the route itself is
// not valid.
func (rb *routeBuild) accepted(parents []parent) {
	if rb.ok() {
		return
	}
	for i := range parents {
		if parents[i].accepted.Status == metav1.ConditionTrue {
			parents[i].accepted = condition(gatewayv1.RouteConditionAccepted, false, gatewayv1.RouteReasonUnsupportedValue, rb.unsupported, rb.gen, rb.b.in.Now)
			parents[i].matches = nil
		}
	}
}

// backend resolves a backendRef at field f to an upstream of the route;
// ok is false (and the reason recorded) when it does not resolve.
func (rb *routeBuild) backend(f string, ref gatewayv1.BackendObjectReference) (string, bool) {
	if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != kindService) {
		rb.badRef(gatewayv1.RouteReasonInvalidKind, fmt.Sprintf("%s: only core Services are supported", f))
		return "", false
	}
	ns := rb.ns
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	if ns != rb.ns && !rb.b.granted(rb.ns, gatewayv1.GroupName, rb.kind, ns, "", kindService, string(ref.Name)) {
		rb.badRef(gatewayv1.RouteReasonRefNotPermitted, fmt.Sprintf("%s: no ReferenceGrant in namespace %s lets %ss of %s refer to Service %s", f, ns, rb.kind, rb.ns, ref.Name))
		return "", false
	}
	svc := rb.b.services[nn(ns, string(ref.Name))]
	if svc == nil {
		rb.badRef(gatewayv1.RouteReasonBackendNotFound, fmt.Sprintf("%s: no Service %s/%s", f, ns, ref.Name))
		return "", false
	}
	if ref.Port == nil {
		rb.badRef(gatewayv1.RouteReasonUnsupportedValue, fmt.Sprintf("%s.port: a Service backend needs a port", f))
		return "", false
	}
	port := rb.servicePort(svc, *ref.Port)
	if port == nil {
		rb.badRef(gatewayv1.RouteReasonBackendNotFound, fmt.Sprintf("%s.port: Service %s/%s has no %s port %d", f, ns, ref.Name, rb.proto, *ref.Port))
		return "", false
	}
	var upTLS *model.UpstreamTLS
	if !slices.Contains(rb.services, nn(ns, svc.Name)) {
		rb.services = append(rb.services, nn(ns, svc.Name))
	}
	if bt := rb.b.backendTLSFor(nn(ns, svc.Name), port.Name); bt != nil && rb.kind != kindTLSRoute {
		if bt.tls == nil {
			// Its policy has no usable CA: never plain text instead.
			return "", false
		}
		upTLS = bt.tls
	}
	return rb.upstream(svc, port, upTLS), true
}

// servicePort is svc's port number n of the route's protocol, or nil.
func (rb *routeBuild) servicePort(svc *corev1.Service, n int32) *corev1.ServicePort {
	var port *corev1.ServicePort
	for i, p := range svc.Spec.Ports {
		if p.Port == n && (p.Protocol == rb.proto || (p.Protocol == "" && rb.proto == corev1.ProtocolTCP)) {
			port = &svc.Spec.Ports[i]
		}
	}
	return port
}

// upstream adds, once, the upstream of svc's port (over TLS when upTLS is
// set) to the route and returns its name.
func (rb *routeBuild) upstream(svc *corev1.Service, port *corev1.ServicePort, upTLS *model.UpstreamTLS) string {
	name := modelName(svc.Namespace, svc.Name, strconv.Itoa(int(port.Port)))
	if upTLS != nil {
		name = modelName(svc.Namespace, svc.Name, strconv.Itoa(int(port.Port)), "tls-"+tlsTag(upTLS))
	}
	if !rb.upIdx[name] {
		rb.upIdx[name] = true
		h2 := rb.http2 || (port.AppProtocol != nil && *port.AppProtocol == "kubernetes.io/h2c")
		rb.ups = append(rb.ups, model.Upstream{Name: name, HTTP2: h2, TLS: upTLS, Endpoints: kubeobj.ReadyEndpointsOf(rb.b.slices[nn(svc.Namespace, svc.Name)], port.Name, rb.proto)})
		rb.webSocket[name] = port.AppProtocol != nil && *port.AppProtocol == appProtocolWebSocket
	}
	return name
}

// appProtocolWebSocket is the appProtocol of a Service port that speaks
// WebSocket over plain HTTP/1.1 (Kubernetes' standard name).
const appProtocolWebSocket = "kubernetes.io/ws"

// upgradesToWebSocket reports whether a route to ts lets requests
// upgrade to WebSocket: one of its backends speaks it.
func (rb *routeBuild) upgradesToWebSocket(ts []model.WeightedTarget) bool {
	return slices.ContainsFunc(ts, func(t model.WeightedTarget) bool { return rb.webSocket[t.Upstream] })
}

// targets resolves a rule's backendRefs. Weight 0 sends nothing; an
// unresolved backend is left out. none is true when no request can be
// forwarded: the spec then answers 500.
func (rb *routeBuild) targets(f string, refs []gatewayv1.BackendRef) (ts []model.WeightedTarget, failed uint32, none bool) {
	return rb.filteredTargets(f, refs, nil)
}

// filteredTargets is targets with headers[i], when set, the header edits
// of refs[i]'s filters (backendfilters.go).
func (rb *routeBuild) filteredTargets(f string, refs []gatewayv1.BackendRef, headers []*model.HeaderRules) (ts []model.WeightedTarget, failed uint32, none bool) {
	for i, ref := range refs {
		up, ok := rb.backend(fmt.Sprintf("%s.backendRefs[%d]", f, i), ref.BackendObjectReference)
		w := int32(1)
		if ref.Weight != nil {
			w = *ref.Weight
		}
		switch {
		case w <= 0:
		case ok:
			t := model.WeightedTarget{Upstream: up, Weight: uint32(w)}
			if i < len(headers) {
				t.Headers = headers[i]
			}
			ts = append(ts, t)
		default:
			failed += uint32(w)
		}
	}
	if len(ts) == 0 {
		return nil, 0, true
	}
	return ts, failed, false
}

// internalError is the model's answer of a rule that cannot forward.
func internalError() *model.RouteResponses {
	return &model.RouteResponses{DirectResponse: &model.DirectResponse{Status: 500}}
}

// duration reads a Gateway API duration; zero turns the timeout off.
func duration(f string, d *gatewayv1.Duration, rb *routeBuild) time.Duration {
	if d == nil {
		return 0
	}
	v, err := time.ParseDuration(string(*d))
	if err != nil || v < 0 {
		rb.unsupportedf("%s: %q is not a duration", f, *d)
		return 0
	}
	if v == 0 {
		return -1
	}
	return v
}
