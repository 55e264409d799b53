package gatewayctl

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// planL4Routes adds to w the TCPRoutes and UDPRoutes whose status Build
// computed differently (see planStatus).
func planL4Routes(in gatewayapi.Inputs, want gatewayapi.Status, pending func(kind string, o metav1.Object) bool, w *statusWrites) {
	for _, r := range in.TCPRoutes {
		if pending(kindTCPRoute, r) {
			continue
		}
		if st, changed := routeStatus(r.Status.RouteStatus, want.TCPRoutes[nameOf(r)].RouteStatus); changed {
			cp := r.DeepCopy()
			cp.Status.RouteStatus = st
			w.tcp = append(w.tcp, cp)
		}
	}
	for _, r := range in.UDPRoutes {
		if pending(kindUDPRoute, r) {
			continue
		}
		if st, changed := routeStatus(r.Status.RouteStatus, want.UDPRoutes[nameOf(r)].RouteStatus); changed {
			cp := r.DeepCopy()
			cp.Status.RouteStatus = st
			w.udp = append(w.udp, cp)
		}
	}
}
