package gatewayctl

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// counts reports whether svc is the VIP Service whose address Gateway gw
// has: gw is of our classes, and svc is the Service the plan wants for
// it (when it wants one).
func (p vipPlan) counts(gw types.NamespacedName, svc *corev1.Service) bool {
	if _, ours := p.ours[gw]; !ours {
		return false
	}
	want, wanted := p.services[gw]
	return !wanted || want.Name == svc.Name
}
