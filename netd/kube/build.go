package kube

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api/v1alpha1"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/netd/model"
)

// Local is what the node itself decides, not the API server: the tunnel
// interface, the MSS and the gateway listeners' port map (from netd's
// flags or settings).
type Local struct {
	// Tunnel is the IPIP interface the IPv4 VIPs are bound on
	// (model.DefaultTunnel); IPv6 VIPs go on model.DefaultTunnel6.
	Tunnel string
	// MSS is the largest MSS advertised from the VIPs
	// when MSSPolicy is fixed.
	MSS uint16
	// MSSPolicy says how the MSS is chosen (netd.mss, netd.mtu).
	MSSPolicy model.MSSPolicy
	// GUEPort is the node's GUE receiver port (netd.gue.port), 0 for none.
	GUEPort uint16
	// ListenerPorts maps an external TCP port to the unprivileged port the
	// local L7 gateway listens on (443 -> 10443; see docs/netd.md). It is
	// applied to the VIPs of Services that opt into L7 (tlb.io/l7: "true")
	// and of Gateways' VIP Services (label tlb.io/owning-gateway), for each
	// TCP port in their spec.ports.
	ListenerPorts map[uint16]uint16
}

// DefaultLocal is the tunnel and MSS policy netd uses when none are
// configured, the same as the file mode's: the clamp derived from the
// path MTU (netd.mss: auto).
func DefaultLocal() Local {
	return Local{Tunnel: model.DefaultTunnel, MSSPolicy: model.MSSPolicy{Mode: model.MSSFromMTU}}
}

// BuildGateway builds the model of the gateway node nodeName from cached
// API objects; node is that Node, nil when the cache does not hold it.
// It does not modify its inputs.
//
// Objects that cannot be used are left out, each with a
// *sharedkube.ObjectError (an address outside every pool of the cluster).
// IPv6 VIPs are bound (on the IPv6 tunnel) but get no port map, which is
// IPv4 only: one that needs it is reported. When node is nil the errors
// hold one wrapping sharedkube.ErrNotBuilt and the model must not be used:
// a missing Node is not a reason to unbind every VIP.
func BuildGateway(node *corev1.Node, services []*corev1.Service, pools []v1alpha1.VIPPool, clusters []v1alpha1.L4Cluster, nodeName string, local Local) (model.Gateway, []error) {
	if node == nil || node.Name != nodeName {
		return model.Gateway{}, []error{fmt.Errorf("%w: Node %q is not in the cache", sharedkube.ErrNotBuilt, nodeName)}
	}
	if !sharedkube.IsGateway(node) {
		return local.gateway(model.NewGateway(local.Tunnel, []netip.Addr{}, local.MSS).WithPorts([]model.PortMap{})), nil
	}
	group := sharedkube.GatewayGroup(node.Labels)
	served := map[string]bool{}
	for _, c := range clusters {
		if sharedkube.GatewayGroup(c.Labels) == group {
			served[c.Name] = true
		}
	}
	vips := []netip.Addr{}
	ports := []model.PortMap{}
	var errs []error
	for _, c := range sortedNames(served) {
		one := map[string]bool{c: true}
		prefixes, pErrs := sharedkube.PoolPrefixes(pools, one)
		errs = append(errs, pErrs...)
		for _, svc := range sharedkube.AssignedServices(services, one) {
			addrs, vErrs := sharedkube.ServiceVIPs(svc, prefixes)
			errs = append(errs, vErrs...)
			for _, a := range addrs {
				vips = append(vips, a)
				maps := portMaps(svc, a, local.ListenerPorts)
				if a.Is6() && len(maps) > 0 {
					errs = append(errs, &sharedkube.ObjectError{Kind: "Service", Name: svc.Namespace + "/" + svc.Name,
						Field: "status.loadBalancer.ingress", Reason: fmt.Sprintf("%s is bound, but the port map redirects IPv4 VIPs only: "+
							"its L7 listener ports are not mapped on it", a)})
					continue
				}
				ports = append(ports, maps...)
			}
		}
	}
	return local.gateway(model.NewGateway(local.Tunnel, vips, local.MSS).WithPorts(ports)), errs
}

// gateway adds the node's MSS policy and GUE receiver to g.
func (l Local) gateway(g model.Gateway) model.Gateway {
	g.MSSPolicy, g.GUEPort = l.MSSPolicy, l.GUEPort
	return g
}

// portMaps returns the port mappings of one VIP of svc: none unless svc
// opts into L7 or is a Gateway's VIP Service (sharedkube.UsesListenerPorts);
// then one per TCP port of spec.ports that listeners maps.
func portMaps(svc *corev1.Service, vip netip.Addr, listeners map[uint16]uint16) []model.PortMap {
	if !sharedkube.UsesListenerPorts(svc) {
		return nil
	}
	var out []model.PortMap
	for _, p := range svc.Spec.Ports {
		if (p.Protocol != "" && p.Protocol != corev1.ProtocolTCP) || p.Port < 1 || p.Port > 65535 {
			continue
		}
		if target, ok := listeners[uint16(p.Port)]; ok && target != uint16(p.Port) {
			out = append(out, model.PortMap{VIP: vip, Protocol: model.ProtocolTCP, Port: uint16(p.Port), TargetPort: target})
		}
	}
	return out
}

func sortedNames(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
