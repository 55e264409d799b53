package controller

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/ipam"
)

func TestFamilyRequest(t *testing.T) {
	policy := func(p corev1.IPFamilyPolicy) *corev1.IPFamilyPolicy { return &p }
	v4, v6 := corev1.IPv4Protocol, corev1.IPv6Protocol
	v6addr := []netip.Addr{netip.MustParseAddr("2001:db8::10")}
	tests := map[string]struct {
		families []corev1.IPFamily
		policy   *corev1.IPFamilyPolicy
		addrs    []netip.Addr
		want     []ipam.Family
		stack    ipam.StackPolicy
		wantErr  string
	}{
		"unset policy reads as single stack": {families: []corev1.IPFamily{v4}, want: []ipam.Family{ipam.IPv4}},
		"prefer dual stack, order kept": {families: []corev1.IPFamily{v6, v4}, policy: policy(corev1.IPFamilyPolicyPreferDualStack),
			want: []ipam.Family{ipam.IPv6, ipam.IPv4}, stack: ipam.PreferDualStack},
		"require dual stack": {families: []corev1.IPFamily{v4, v6}, policy: policy(corev1.IPFamilyPolicyRequireDualStack),
			want: []ipam.Family{ipam.IPv4, ipam.IPv6}, stack: ipam.RequireDualStack},
		"IPv6 address of a dual-stack Service": {families: []corev1.IPFamily{v4, v6}, policy: policy(corev1.IPFamilyPolicyPreferDualStack), addrs: v6addr,
			want: []ipam.Family{ipam.IPv4, ipam.IPv6}, stack: ipam.PreferDualStack},
		"IPv6 address of a single-stack IPv4 Service": {families: []corev1.IPFamily{v4, v6}, addrs: v6addr,
			wantErr: "annotation tlb.io/vip: 2001:db8::10 is an IPv6 address, and the Service's spec.ipFamilies [IPv4 IPv6] with spec.ipFamilyPolicy SingleStack gives it IPv4 only"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			svc := &corev1.Service{Spec: corev1.ServiceSpec{IPFamilies: tc.families, IPFamilyPolicy: tc.policy}}
			req, err := familyRequest(svc, ipam.Request{Environment: "e", Addresses: tc.addrs})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(req.Families, tc.want) || req.Stack != tc.stack || req.Environment != "e" {
				t.Fatalf("got families %v stack %v (env %q), want %v %v", req.Families, req.Stack, req.Environment, tc.want, tc.stack)
			}
		})
	}
}
