package gatewayapi

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// frontendValidation returns the client certificate validation of gw's
// HTTPS listeners on port (spec.tls.frontend: the perPort entry of the
// port, else the default) and its field; nil when none applies.
func frontendValidation(gw *gatewayv1.Gateway, port gatewayv1.PortNumber) (*gatewayv1.FrontendTLSValidation, string) {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return nil, ""
	}
	fe := gw.Spec.TLS.Frontend
	for i, p := range fe.PerPort {
		if p.Port == port {
			return p.TLS.Validation, fmt.Sprintf("spec.tls.frontend.perPort[%d].tls.validation", i)
		}
	}
	return fe.Default.Validation, "spec.tls.frontend.default.validation"
}

// listenerClientCertificate sets the client certificate validation of an
// HTTPS listener of gw from spec.tls.frontend. The spec
// (FrontendTLSValidation.CACertificateRefs): any reference not used sets
// ResolvedRefs False (InvalidCACertificateKind, RefNotPermitted or
// InvalidCACertificateRef); when none could be used the listener is not
// accepted (NoValidCACertificate), never served without the check. With
// some usable it is served with those.
func (b *builder) listenerClientCertificate(gw *gatewayv1.Gateway, l *listener) {
	v, field := frontendValidation(gw, l.spec.Port)
	if v == nil {
		return
	}
	refs := make([]caRef, len(v.CACertificateRefs))
	for i, r := range v.CACertificateRefs {
		refs[i] = caRef{group: string(r.Group), kind: string(r.Kind), name: string(r.Name), field: fmt.Sprintf("%s.caCertificateRefs[%d]", field, i)}
		if r.Namespace != nil {
			refs[i].namespace = string(*r.Namespace)
		}
	}
	bundle, problems := b.caBundle(gw.Namespace, kindGateway, refs)
	gen, now := gw.Generation, b.in.Now
	if len(problems) > 0 {
		reason := gatewayv1.ListenerReasonInvalidCACertificateRef
		switch problems[0].fault {
		case caKind:
			reason = gatewayv1.ListenerReasonInvalidCACertificateKind
		case caNotPermitted:
			reason = gatewayv1.ListenerReasonRefNotPermitted
		}
		if l.resolved.Status == metav1.ConditionTrue { // a certificate's fault, if any, is said first
			l.resolved = condition(gatewayv1.ListenerConditionResolvedRefs, false, reason, caMessages(problems), gen, now)
			l.caPartial = bundle != nil
		}
	}
	if bundle == nil {
		l.accepted = condition(gatewayv1.ListenerConditionAccepted, false, gatewayv1.ListenerReasonNoValidCACertificate,
			field+": no CA certificate reference could be used; the listener is not served rather than served without client certificate validation", gen, now)
		return
	}
	fallback := v.Mode == gatewayv1.AllowInsecureFallback
	l.clientCert = &model.ClientCertificate{CA: bundle, Required: !fallback, AcceptUntrusted: fallback}
}

// insecureFrontend is the InsecureFrontendValidationMode condition of gw
// when some listener of it validates client certificates in
// AllowInsecureFallback mode; ok is false otherwise (the condition is
// then absent, as the spec asks).
func (b *builder) insecureFrontend(g *gateway) (metav1.Condition, bool) {
	for _, l := range g.listeners {
		if l.clientCert != nil && l.clientCert.AcceptUntrusted {
			return condition(gatewayv1.GatewayConditionInsecureFrontendValidationMode, true, gatewayv1.GatewayReasonConfigurationChanged,
				fmt.Sprintf("listener %s (port %d) accepts clients without a valid certificate (AllowInsecureFallback)", l.spec.Name, l.spec.Port), g.obj.Generation, b.in.Now), true
		}
	}
	return metav1.Condition{}, false
}
