package gatewayctl

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// TestSeveralVIPServices: a Gateway gets one VIP Service per requested
// address (it used to get one, for the first address); a Service keeps
// serving its address when spec.addresses is reordered or shortened, a
// Service no request keeps is deleted, and the addresses of the Services
// serving the requests are the Gateway's, in the order of spec.addresses.
func TestSeveralVIPServices(t *testing.T) {
	classes := []*gatewayv1.GatewayClass{class("tlb", gatewayapi.ControllerName, "prod")}
	ip := gatewayv1.IPAddressType
	key := types.NamespacedName{Namespace: "a", Name: "web"}
	plan := func(addrs ...string) vipPlan {
		var as []gatewayv1.GatewaySpecAddress
		for _, a := range addrs {
			as = append(as, addr(ip, a))
		}
		return planVIPs(classes, testConfigs, []*gatewayv1.Gateway{gateway("a", "web", "tlb", as...)})
	}
	// svcs is the cache after applying d over have, each new Service
	// given the VIP it asks for (or 203.0.113.99 when it asks for none).
	apply := func(have []*corev1.Service, d vipDiff) []*corev1.Service {
		var out []*corev1.Service
		for _, s := range have {
			if !slices.Contains(d.delete, s) {
				out = append(out, s)
			}
		}
		for i, s := range out {
			for _, u := range d.update {
				if u.Name == s.Name {
					out[i] = u
				}
			}
		}
		for _, s := range d.create {
			s = s.DeepCopy()
			vip := s.Annotations[api.AnnotationVIP]
			if vip == "" {
				vip = "203.0.113.99"
			}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip}}
			out = append(out, s)
		}
		return out
	}
	names := func(ss []*corev1.Service) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name+"="+s.Annotations[api.AnnotationVIP])
		}
		slices.Sort(out)
		return out
	}

	p := plan("203.0.113.7", "", "203.0.113.8")
	d := diffVIPs(p, nil)
	if got, want := names(d.create), []string{"web-vip-2=", "web-vip-3=203.0.113.8", "web-vip=203.0.113.7"}; !slices.Equal(got, want) {
		t.Fatalf("created %v; want %v", got, want)
	}
	cache := apply(nil, d)
	d = diffVIPs(p, cache)
	if !d.empty() || d.keep != 3 {
		t.Fatalf("converged: diff %+v; want 3 kept", d)
	}
	if got := d.addresses(p, cache)[key]; len(got) != 3 || got[0].String() != "203.0.113.7" || got[1].String() != "203.0.113.99" || got[2].String() != "203.0.113.8" {
		t.Errorf("addresses %v; want 203.0.113.7, the IPAM's pick and 203.0.113.8, in request order", got)
	}

	// Reordered and shortened (the conformance suite's
	// GatewayStaticAddresses drops its first address): the Service of
	// 203.0.113.8 keeps it, the others go.
	p = plan("203.0.113.8")
	d = diffVIPs(p, cache)
	if len(d.create) != 0 || len(d.update) != 0 || d.keep != 1 {
		t.Fatalf("diff %+v; want web-vip-3 kept, nothing created", d)
	}
	if got, want := names(d.delete), []string{"web-vip-2=", "web-vip=203.0.113.7"}; !slices.Equal(got, want) {
		t.Errorf("deleted %v; want %v", got, want)
	}
	cache = apply(cache, d)

	// A new request takes the first free name.
	p = plan("203.0.113.8", "203.0.113.9")
	d = diffVIPs(p, cache)
	if got, want := names(d.create), []string{"web-vip=203.0.113.9"}; !slices.Equal(got, want) || len(d.delete) != 0 {
		t.Fatalf("created %v, deleted %v; want %v and none", got, names(d.delete), want)
	}

	// A request replacing another takes over the Service whose name it
	// gets: one update, no delete and create.
	p = plan("203.0.113.10")
	d = diffVIPs(p, cache)
	if len(d.update) != 1 || d.update[0].Name != "web-vip-3" || d.update[0].Annotations[api.AnnotationVIP] != "203.0.113.10" ||
		len(d.create)+len(d.delete) != 0 {
		t.Fatalf("diff %+v; want web-vip-3 updated to ask for 203.0.113.10", d)
	}
}
