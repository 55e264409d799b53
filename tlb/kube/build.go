package kube

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	sharedkube "github.com/tlbproject/tlb/internal/kube"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/tlb/model"
)

// BuildDesired builds the model of the director of L4 cluster clusterName
// from cached API objects. It does not modify its inputs.
//
//   - Real servers: the InternalIP of every gateway node (label
//     tlb.io/gateway=true) of the cluster's gateway group, of the VIP's
//     family: an IPv4 VIP is tunnelled to the nodes' IPv4 InternalIPs,
//     an IPv6 VIP to their IPv6 InternalIPs (a tunnel carries one
//     family). A Ready node has
//     weight 1; a node that is not Ready, or carries the label
//     node.kubernetes.io/exclude-from-external-load-balancers, stays in
//     the set at weight 0 (no new flows, existing ones keep their real
//     server), so every director keeps the same Maglev table while a
//     node flaps. A node annotated tlb.io/drain is Draining (see
//     nodeDrain): weight 0, and removed by the agent once its flows end.
//   - Services: one IPVS service per (VIP, port, protocol) for every
//     TLB Service annotated tlb.io/assigned-l4-cluster=clusterName, for each
//     VIP in its status.loadBalancer.ingress, with the default scheduler
//     (mh, flags mh-fallback and mh-port).
//   - VIPRanges: the CIDRs of the cluster's VIPPools.
//   - L7: for every Service annotated tlb.io/l7 "true", one L7 service
//     ("namespace/name") per VIP of it that the model serves, with the
//     count of its ready EndpointSlice endpoints (ReadyBackends). A VIP
//     whose every L7 service has none is down for GTM. A Gateway's VIP
//     Service (IsGatewayVIP) is never an L7 service: its VIP is up while
//     its real servers are.
//
// A node without an InternalIP of a family is left out of the real
// servers of that family's VIPs, with an error naming it (reported only
// when some VIP of that family exists).
//
// Objects that cannot be used are left out, each with an *ObjectError.
// When the model cannot be built at all (the L4Cluster does not exist,
// or the result fails model validation) the errors include one wrapping
// ErrNotBuilt and the model must not be used. The result is Sorted.
func BuildDesired(services []*corev1.Service, nodes []*corev1.Node, pools []v1alpha1.VIPPool, clusters []v1alpha1.L4Cluster,
	endpointSlices []*discoveryv1.EndpointSlice, clusterName string) (model.Desired, []error) {
	idx := slices.IndexFunc(clusters, func(c v1alpha1.L4Cluster) bool { return c.Name == clusterName })
	if idx < 0 {
		return model.Desired{}, []error{fmt.Errorf("%w: L4Cluster %q does not exist", sharedkube.ErrNotBuilt, clusterName)}
	}
	encap, err := ClusterEncap(clusters[idx])
	if err != nil {
		return model.Desired{}, []error{fmt.Errorf("%w: %w", sharedkube.ErrNotBuilt, err)}
	}
	mine := map[string]bool{clusterName: true}
	ranges, errs := sharedkube.PoolPrefixes(pools, mine)
	group := sharedkube.GatewayGroup(clusters[idx].Labels)
	realServersOf := map[bool][]model.RealServer{} // by "is IPv4", built on first use
	realServers := func(vip netip.Addr) []model.RealServer {
		rs, ok := realServersOf[vip.Is4()]
		if !ok {
			var rsErrs []error
			rs, rsErrs = gatewayRealServers(nodes, group, vip.Is4())
			errs = append(errs, rsErrs...)
			realServersOf[vip.Is4()] = rs
		}
		return rs
	}

	d := model.Desired{VIPRanges: ranges}
	owner := map[model.Key]string{}
	var ready map[string]int // built on the first L7 Service
	for _, svc := range sharedkube.AssignedServices(services, mine) {
		name := svc.Namespace + "/" + svc.Name
		vips, vErrs := sharedkube.ServiceVIPs(svc, ranges)
		errs = append(errs, vErrs...)
		for _, vip := range vips {
			served := false // some port of this VIP is in the model
			for i, p := range svc.Spec.Ports {
				s, err := virtualService(name, i, vip, p)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if prev, dup := owner[s.Key()]; dup {
					errs = append(errs, &sharedkube.ObjectError{Kind: "Service", Name: name, Field: fmt.Sprintf("spec.ports[%d]", i),
						Reason: fmt.Sprintf("%s is already served for the older Service %s; left out", s.Key(), prev)})
					continue
				}
				owner[s.Key()] = name
				s.RealServers = slices.Clone(realServers(vip))
				s.Encap = encap
				d.Services = append(d.Services, s)
				served = true
			}
			if served && sharedkube.IsL7(svc) && !sharedkube.IsGatewayVIP(svc) {
				if ready == nil {
					ready = ReadyBackends(endpointSlices)
				}
				d.L7 = append(d.L7, model.L7Service{VIP: vip, Name: name, ReadyBackends: ready[name]})
			}
		}
	}
	d = d.Sorted()
	if err := d.Validate(); err != nil {
		return model.Desired{}, append(errs, fmt.Errorf("%w: the model built for L4 cluster %q is invalid: %w", sharedkube.ErrNotBuilt, clusterName, err))
	}
	return d, errs
}

// ClusterEncap reads the L4Cluster's spec.encapsulation (absent: IPIP).
// A bad value (the API server's schema refuses it; an older schema may
// not) is an *ObjectError naming the cluster and the field: the model is
// then not built and the directors keep the last good state.
func ClusterEncap(c v1alpha1.L4Cluster) (model.Encap, error) {
	e := c.Spec.Encapsulation
	if e == nil {
		return model.Encap{}, nil
	}
	bad := func(field, reason string) error {
		return &sharedkube.ObjectError{Kind: "L4Cluster", Name: c.Name, Field: "spec.encapsulation." + field, Reason: reason}
	}
	if e.Port < 0 || e.Port > 65535 {
		return model.Encap{}, bad("port", fmt.Sprintf("%d is not 1..65535", e.Port))
	}
	out := model.Encap{Type: model.EncapType(e.Type), Port: uint16(e.Port)}
	if e.Type == "" {
		return model.Encap{}, bad("type", "required: ipip or gue")
	}
	if field, reason := out.Check(); field != "" {
		return model.Encap{}, bad(field, reason)
	}
	return out.Normal(), nil
}

// virtualService maps one Service port on one VIP to an IPVS service.
func virtualService(name string, i int, vip netip.Addr, p corev1.ServicePort) (model.Service, error) {
	proto := model.Protocol(strings.ToLower(string(p.Protocol)))
	if p.Protocol == "" {
		proto = model.TCP
	}
	if proto != model.TCP && proto != model.UDP && proto != model.SCTP {
		return model.Service{}, &sharedkube.ObjectError{Kind: "Service", Name: name, Field: fmt.Sprintf("spec.ports[%d].protocol", i),
			Reason: fmt.Sprintf("%q is not TCP, UDP or SCTP; left out", p.Protocol)}
	}
	if p.Port < 1 || p.Port > 65535 {
		return model.Service{}, &sharedkube.ObjectError{Kind: "Service", Name: name, Field: fmt.Sprintf("spec.ports[%d].port", i),
			Reason: fmt.Sprintf("%d is not 1..65535; left out", p.Port)}
	}
	return model.Service{VIP: vip, Protocol: proto, Port: uint16(p.Port)}, nil
}

// gatewayRealServers returns the real servers of gateway group group for
// VIPs of one family (v4: IPv4, else IPv6), sorted by address: the first
// InternalIP of that family of each gateway node of the group, weight 1 when Ready and not excluded from external load
// balancers, 0 otherwise, Draining when annotated tlb.io/drain. Nodes are read in name
// order, so of two nodes reporting one address the first by name wins.
func gatewayRealServers(nodes []*corev1.Node, group string, v4 bool) ([]model.RealServer, []error) {
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b *corev1.Node) int { return cmp.Compare(a.Name, b.Name) })
	var out []model.RealServer
	var errs []error
	seen := map[netip.Addr]string{}
	for _, n := range sorted {
		if !sharedkube.IsGateway(n) || sharedkube.GatewayGroup(n.Labels) != group {
			continue
		}
		addr, ok := nodeInternalIP(n, v4)
		if !ok {
			family := map[bool]string{true: "IPv4", false: "IPv6"}[v4]
			errs = append(errs, &sharedkube.ObjectError{Kind: "Node", Name: n.Name, Field: "status.addresses",
				Reason: fmt.Sprintf("no %s InternalIP (the tunnel to it carries %s VIPs in %s); left out of the real servers of %s VIPs", family, family, family, family)})
			continue
		}
		if prev, dup := seen[addr]; dup {
			errs = append(errs, &sharedkube.ObjectError{Kind: "Node", Name: n.Name, Field: "status.addresses",
				Reason: fmt.Sprintf("InternalIP %s is also node %s's; left out of the real servers", addr, prev)})
			continue
		}
		seen[addr] = n.Name
		rs := model.RealServer{Addr: addr, Weight: model.DefaultWeight()}
		if _, excluded := n.Labels[api.LabelExcludeFromExternalLoadBalancers]; excluded || !sharedkube.IsReady(n) {
			rs.Weight = 0
		}
		var err error
		if rs.Draining, rs.DrainSince, err = nodeDrain(n); err != nil {
			errs = append(errs, err)
		}
		out = append(out, rs)
	}
	slices.SortFunc(out, func(a, b model.RealServer) int { return a.Addr.Compare(b.Addr) })
	return out, errs
}

// nodeInternalIP returns the first InternalIP of node of one family (v4:
// IPv4, else IPv6; link-local IPv6 addresses do not count).
func nodeInternalIP(node *corev1.Node, v4 bool) (netip.Addr, bool) {
	for _, a := range node.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() == v4 && ip.Zone() == "" && !ip.Is4In6() &&
			!ip.IsUnspecified() && !ip.IsMulticast() && !ip.IsLinkLocalUnicast() {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// nodeDrain reads the annotation tlb.io/drain of a gateway node: absent,
// not draining; "true", draining since the director first saw it; an RFC
// 3339 time, draining since then. Any other value is an error naming the
// node and the annotation, and the node serves as if it were absent.
func nodeDrain(n *corev1.Node) (bool, time.Time, error) {
	v, ok := n.Annotations[api.AnnotationDrain]
	if !ok {
		return false, time.Time{}, nil
	}
	if v == "true" {
		return true, time.Time{}, nil
	}
	since, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return false, time.Time{}, &sharedkube.ObjectError{Kind: "Node", Name: n.Name, Field: "metadata.annotations[" + api.AnnotationDrain + "]",
			Reason: fmt.Sprintf("%q is neither \"true\" nor an RFC 3339 time like 2026-12-03T01:00:00Z; the node is not drained", v)}
	}
	return true, since, nil
}
