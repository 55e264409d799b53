package kube

import (
	"errors"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzServiceVIPs feeds arbitrary status.loadBalancer.ingress[].ip values
// (written by anyone with services/status access) to ServiceVIPs: every
// address returned must parse and lie in a prefix, and every value left
// out must come with an error naming the field.
func FuzzServiceVIPs(f *testing.F) {
	for _, s := range []string{"203.0.113.10", "203.0.113.300", "not-an-ip", "", "fe80::1%eth0", "2001:db8::1", "::ffff:203.0.113.10", "198.51.100.1", "203.0.113.10 "} {
		f.Add(s)
	}
	prefixes := []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8::/64")}
	f.Fuzz(func(t *testing.T, ip string) {
		s := svc("ns", "fuzz", "east", 0, []string{ip, ip})
		got, errs := ServiceVIPs(s, prefixes)
		if len(got) > 1 {
			t.Fatalf("the same address twice gave %v", got)
		}
		for _, a := range got {
			if !slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(a) }) {
				t.Fatalf("%s returned though it is in no prefix", a)
			}
		}
		if ip != "" && len(got) == 0 && len(errs) != 2 {
			t.Fatalf("%q left out with %d errors, want one per ingress entry", ip, len(errs))
		}
		for _, e := range errs {
			var oe *ObjectError
			if !errors.As(e, &oe) || oe.Kind != "Service" || oe.Name != "ns/fuzz" || oe.Field == "" {
				t.Fatalf("error %v does not name the Service and field", e)
			}
		}
	})
}

func TestServiceVIPsSkipsHostnames(t *testing.T) {
	s := svc("ns", "h", "east", 0, nil)
	s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "lb.example.com"}, {IP: "203.0.113.5"}}
	got, errs := ServiceVIPs(s, []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")})
	if len(errs) != 0 || len(got) != 1 || got[0] != netip.MustParseAddr("203.0.113.5") {
		t.Fatalf("got %v %v, want [203.0.113.5] and no errors", got, errs)
	}
}
