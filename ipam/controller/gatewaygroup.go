package controller

import (
	"fmt"
	"net/netip"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/ipam"
)

// ReasonGatewayGroupNotServed: the Service's tlb.io/gateway-group names an
// L7 gateway group that no L4Cluster of its environment serves.
const ReasonGatewayGroupNotServed = "GatewayGroupNotServed"

// defaultGatewayGroup is how the Gateway controller names the group of
// L4Clusters without a tlb.io/gateway-group label.
const defaultGatewayGroup = "default"

// CheckGatewayGroup returns an error when group (the value of the
// tlb.io/gateway-group annotation of a Gateway's VIP Service) is served
// by no L4Cluster of the environment req is placed in: an L4Cluster
// serves the group named by its label tlb.io/gateway-group (the same key
// as the annotation), and a cluster without that label serves the
// default group ("" or "default"). The environment is req's, else that of
// the L4Cluster of the pool req names or of the pool holding req's
// address. A Gateway so never lands on a group of another environment.
func CheckGatewayGroup(group string, req ipam.Request, pools []v1alpha1.VIPPool, clusters []v1alpha1.L4Cluster) error {
	envOf := map[string]string{}
	for _, cl := range clusters {
		envOf[cl.Name] = cl.Spec.Environment
	}
	env := string(req.Environment)
	for _, p := range pools {
		if env != "" {
			break
		}
		if req.Pool != "" && p.Name == req.Pool {
			env = envOf[p.Spec.L4Cluster]
		}
		if req.Pool == "" && len(req.Addresses) > 0 && poolHolds(p, req.Addresses[0]) {
			env = envOf[p.Spec.L4Cluster]
		}
	}
	if env == "" {
		return fmt.Errorf("annotation %s: %q: the Service's environment is unknown (no %s, and its %s or %s is in no VIPPool)",
			api.AnnotationGatewayGroup, group, api.AnnotationEnvironment, api.AnnotationPool, api.AnnotationVIP)
	}
	for _, cl := range clusters {
		served := cl.Labels[api.AnnotationGatewayGroup]
		if cl.Spec.Environment == env && (served == group || (isDefaultGroup(served) && isDefaultGroup(group))) {
			return nil
		}
	}
	return fmt.Errorf("annotation %s: no L4Cluster of environment %q serves gateway group %q (label %s on the L4Cluster)",
		api.AnnotationGatewayGroup, env, group, api.AnnotationGatewayGroup)
}

func isDefaultGroup(g string) bool { return g == "" || g == defaultGatewayGroup }

func poolHolds(p v1alpha1.VIPPool, addr netip.Addr) bool {
	for _, s := range p.Spec.CIDRs {
		if pfx, err := netip.ParsePrefix(s); err == nil && pfx.Contains(addr) {
			return true
		}
	}
	return false
}
