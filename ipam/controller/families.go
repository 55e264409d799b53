package controller

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/ipam"
)

// familyRequest completes what svc's annotations ask for with the
// families of its spec: one VIP per family of spec.ipFamilies as
// spec.ipFamilyPolicy says (unset reads as SingleStack, as the API server
// defaults it). An address in tlb.io/vip must be of a family the Service
// is given: the error names the annotation and the fields.
func familyRequest(svc *corev1.Service, req ipam.Request) (ipam.Request, error) {
	for _, f := range svc.Spec.IPFamilies {
		switch f {
		case corev1.IPv4Protocol:
			req.Families = append(req.Families, ipam.IPv4)
		case corev1.IPv6Protocol:
			req.Families = append(req.Families, ipam.IPv6)
		}
	}
	if p := svc.Spec.IPFamilyPolicy; p != nil {
		switch *p {
		case corev1.IPFamilyPolicyPreferDualStack:
			req.Stack = ipam.PreferDualStack
		case corev1.IPFamilyPolicyRequireDualStack:
			req.Stack = ipam.RequireDualStack
		}
	}
	given := req.Families
	if req.Stack == ipam.SingleStack && len(given) > 1 {
		given = given[:1]
	}
	for _, addr := range req.Addresses {
		if len(given) > 0 && !slices.Contains(given, ipam.FamilyOf(addr)) {
			return ipam.Request{}, fmt.Errorf("annotation %s: %s is an %s address, and the Service's spec.ipFamilies %v with spec.ipFamilyPolicy %s gives it %s only; set an address of that family, or add %s to spec.ipFamilies",
				api.AnnotationVIP, addr, ipam.FamilyOf(addr), svc.Spec.IPFamilies, req.Stack, familyNames(given), ipam.FamilyOf(addr))
		}
	}
	return req, nil
}

func familyNames(fs []ipam.Family) string {
	out := ""
	for i, f := range fs {
		if i > 0 {
			out += " and "
		}
		out += f.String()
	}
	return out
}

// assignFromStatus records the VIPs svc's status holds, the first of each
// family, as svc's: after a restart the allocator learns them again.
func (c *Controller) assignFromStatus(key string, svc *corev1.Service) int {
	var seen []ipam.Family
	n := 0
	for _, ip := range statusIPs(svc) {
		if slices.Contains(seen, ipam.FamilyOf(ip)) {
			continue
		}
		seen = append(seen, ipam.FamilyOf(ip))
		if _, err := c.alloc.Assign(key, ip); err != nil {
			c.log.Warn("VIP recorded in status cannot be kept", "service", key, "vip", ip, "err", err)
			continue
		}
		n++
	}
	return n
}

// vipList joins the addresses of als for a message.
func vipList(als []ipam.Allocation) (addrs []netip.Addr, pools []string) {
	for _, al := range als {
		addrs = append(addrs, al.Address)
		if !slices.Contains(pools, al.Pool) {
			pools = append(pools, al.Pool)
		}
	}
	return addrs, pools
}
