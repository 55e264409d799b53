package kube

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/ipam/api/v1alpha1"
	"github.com/tlbproject/tlb/netd/model"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
)

// Local is what the node itself decides, not the API server: the tunnel
// interface and the MSS (from netd's flags or settings).
type Local struct {
	// Tunnel is the IPIP interface the VIPs are bound on (model.DefaultTunnel).
	Tunnel string
	// MSS is the largest MSS advertised from the VIPs (model.DefaultMSS).
	MSS uint16
}

// DefaultLocal is the tunnel and MSS netd uses when none are configured.
func DefaultLocal() Local { return Local{Tunnel: model.DefaultTunnel, MSS: model.DefaultMSS} }

// BuildGateway builds the model of the gateway node nodeName from cached
// API objects; node is that Node, nil when the cache does not hold it.
// It does not modify its inputs.
//
// Objects that cannot be used are left out, each with a
// *tlbkube.ObjectError (an address outside every pool of the cluster, a
// non-IPv4 VIP: IPIP carries IPv4 only). When node is nil the errors
// hold one wrapping tlbkube.ErrNotBuilt and the model must not be used:
// a missing Node is not a reason to unbind every VIP.
func BuildGateway(node *corev1.Node, services []*corev1.Service, pools []v1alpha1.VIPPool, clusters []v1alpha1.L4Cluster, nodeName string, local Local) (model.Gateway, []error) {
	if node == nil || node.Name != nodeName {
		return model.Gateway{}, []error{fmt.Errorf("%w: Node %q is not in the cache", tlbkube.ErrNotBuilt, nodeName)}
	}
	if !tlbkube.IsGateway(node) {
		return model.NewGateway(local.Tunnel, []netip.Addr{}, local.MSS), nil
	}
	group := tlbkube.GatewayGroup(node.Labels)
	served := map[string]bool{}
	for _, c := range clusters {
		if tlbkube.GatewayGroup(c.Labels) == group {
			served[c.Name] = true
		}
	}
	vips := []netip.Addr{}
	var errs []error
	for _, c := range sortedNames(served) {
		one := map[string]bool{c: true}
		prefixes, pErrs := tlbkube.PoolPrefixes(pools, one)
		errs = append(errs, pErrs...)
		for _, svc := range tlbkube.AssignedServices(services, one) {
			addrs, vErrs := tlbkube.ServiceVIPs(svc, prefixes)
			errs = append(errs, vErrs...)
			for _, a := range addrs {
				if !a.Is4() {
					errs = append(errs, &tlbkube.ObjectError{Kind: "Service", Name: svc.Namespace + "/" + svc.Name,
						Field: "status.loadBalancer.ingress", Reason: fmt.Sprintf("%s is not IPv4 (IPIP carries IPv4 only); left out", a)})
					continue
				}
				vips = append(vips, a)
			}
		}
	}
	return model.NewGateway(local.Tunnel, vips, local.MSS), errs
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
