package gatewayapi

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// frontendValidation returns the field of gw's spec.tls.frontend that asks
// HTTPS listeners on port to validate client certificates, "" when none
// does. Client certificate validation of Gateways is not built yet: such a
// listener is refused (Accepted False) rather than served without the
// check its owner asked for.
func frontendValidation(gw *gatewayv1.Gateway, port gatewayv1.PortNumber) string {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return ""
	}
	fe := gw.Spec.TLS.Frontend
	for i, p := range fe.PerPort {
		if p.Port == port {
			if p.TLS.Validation != nil {
				return fmt.Sprintf("spec.tls.frontend.perPort[%d].tls.validation", i)
			}
			return ""
		}
	}
	if fe.Default.Validation != nil {
		return "spec.tls.frontend.default.validation"
	}
	return ""
}
