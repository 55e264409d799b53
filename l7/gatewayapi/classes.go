package gatewayapi

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
)

// classes accepts the GatewayClasses of ControllerName whose parameters
// resolve, and records the gateway group of each.
func (b *builder) classes() {
	for _, c := range b.in.Classes {
		if c.Spec.ControllerName != ControllerName {
			continue
		}
		group, msg := b.classParameters(c)
		var cond metav1.Condition
		if msg != "" {
			b.classBad[c.Name] = true
			cond = condition(gatewayv1.GatewayClassConditionStatusAccepted, false, gatewayv1.GatewayClassReasonInvalidParameters, msg, c.Generation, b.in.Now)
		} else {
			b.classGroup[c.Name] = group
			cond = condition(gatewayv1.GatewayClassConditionStatusAccepted, true, gatewayv1.GatewayClassReasonAccepted, "accepted by "+string(ControllerName), c.Generation, b.in.Now)
		}
		b.out.Status.GatewayClasses[c.Name] = gatewayv1.GatewayClassStatus{
			Conditions:        []metav1.Condition{cond},
			SupportedFeatures: supportedFeatureStatus(),
		}
	}
}

// classParameters returns the gateway group of class c, or a message
// saying why its parametersRef is invalid.
func (b *builder) classParameters(c *gatewayv1.GatewayClass) (group, msg string) {
	ref := c.Spec.ParametersRef
	if ref == nil {
		return tlbv1alpha1.DefaultGatewayGroup, ""
	}
	if string(ref.Group) != tlbv1alpha1.GroupName || string(ref.Kind) != tlbv1alpha1.KindGatewayClassConfig {
		return "", fmt.Sprintf("spec.parametersRef: want group %s kind %s, got group %q kind %q",
			tlbv1alpha1.GroupName, tlbv1alpha1.KindGatewayClassConfig, ref.Group, ref.Kind)
	}
	if ref.Namespace != nil && *ref.Namespace != "" {
		return "", fmt.Sprintf("spec.parametersRef.namespace: %s is cluster-scoped; leave namespace unset", tlbv1alpha1.KindGatewayClassConfig)
	}
	cfg := b.classConfig(ref.Name)
	if cfg == nil {
		return "", fmt.Sprintf("spec.parametersRef: no %s %q", tlbv1alpha1.KindGatewayClassConfig, ref.Name)
	}
	return cfg.Spec.Group(), ""
}
