package kube

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
)

// PoolPrefixes returns the sorted, unique CIDRs of the VIPPools whose
// spec.l4Cluster is in clusters. A CIDR that does not parse is left out
// with an error naming the pool and field.
func PoolPrefixes(pools []v1alpha1.VIPPool, clusters map[string]bool) ([]netip.Prefix, []error) {
	var out []netip.Prefix
	var errs []error
	for _, p := range pools {
		if !clusters[p.Spec.L4Cluster] {
			continue
		}
		for i, s := range p.Spec.CIDRs {
			pfx, err := netip.ParsePrefix(s)
			if err != nil || pfx.Masked() != pfx {
				errs = append(errs, &ObjectError{Kind: "VIPPool", Name: p.Name, Field: fmt.Sprintf("spec.cidrs[%d]", i),
					Reason: fmt.Sprintf("%q is not a CIDR in network form; left out", s)})
				continue
			}
			out = append(out, pfx)
		}
	}
	slices.SortFunc(out, comparePrefix)
	return slices.Compact(out), errs
}

func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return cmp.Compare(a.Bits(), b.Bits())
}

// AssignedServices returns the TLB Services whose VIP the ipam controller
// assigned to one of clusters (annotation tlb.io/assigned-l4-cluster),
// oldest first (then by namespace/name), so that of two Services
// claiming one VIP the older one wins, as in the ipam controller.
func AssignedServices(services []*corev1.Service, clusters map[string]bool) []*corev1.Service {
	var out []*corev1.Service
	for _, s := range services {
		if IsTLBService(s) && clusters[s.Annotations[api.AnnotationAssignedL4Cluster]] {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Service) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// ServiceVIPs returns the addresses in svc's status.loadBalancer.ingress
// that lie in one of prefixes. An address that does not parse or lies
// outside every prefix is left out with an error naming the Service and
// the field.
func ServiceVIPs(svc *corev1.Service, prefixes []netip.Prefix) ([]netip.Addr, []error) {
	var out []netip.Addr
	var errs []error
	name := svc.Namespace + "/" + svc.Name
	for i, in := range svc.Status.LoadBalancer.Ingress {
		field := fmt.Sprintf("status.loadBalancer.ingress[%d].ip", i)
		if in.IP == "" {
			continue // a hostname entry: not ours
		}
		a, err := netip.ParseAddr(in.IP)
		if err != nil || a.Zone() != "" {
			errs = append(errs, &ObjectError{Kind: "Service", Name: name, Field: field, Reason: fmt.Sprintf("%q is not an IP address; left out", in.IP)})
			continue
		}
		if !slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(a) }) {
			errs = append(errs, &ObjectError{Kind: "Service", Name: name, Field: field,
				Reason: fmt.Sprintf("%s is in no VIPPool of L4 cluster %q; left out", a, svc.Annotations[api.AnnotationAssignedL4Cluster])})
			continue
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, errs
}
