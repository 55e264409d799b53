package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
)

// TestGatewayVIPUsesListenerPorts: a Gateway's VIP Service (label
// tlb.io/owning-gateway) and an L7 Service use the listeners' port map;
// a plain Service does not.
func TestGatewayVIPUsesListenerPorts(t *testing.T) {
	plain := svc("team", "plain", "east", 1, nil)
	gwVIP := svc("team", "shop-vip", "east", 1, nil)
	l7 := svc("team", "web", "east", 1, nil)
	l7.Annotations[api.AnnotationL7] = "true"
	gwVIP.Labels = map[string]string{api.LabelOwningGateway: "team.shop"}
	for name, tc := range map[string]struct {
		s                  *corev1.Service
		gateway, listeners bool
	}{
		"plain":       {plain, false, false},
		"L7":          {l7, false, true},
		"Gateway VIP": {gwVIP, true, true},
	} {
		if got := IsGatewayVIP(tc.s); got != tc.gateway {
			t.Errorf("%s: IsGatewayVIP = %v, want %v", name, got, tc.gateway)
		}
		if got := UsesListenerPorts(tc.s); got != tc.listeners {
			t.Errorf("%s: UsesListenerPorts = %v, want %v", name, got, tc.listeners)
		}
	}
}
