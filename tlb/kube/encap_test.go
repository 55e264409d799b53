package kube

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	sharedkube "github.com/tlbproject/tlb/internal/kube"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/tlb/model"
)

func TestBuildDesiredTakesTheClusterEncapsulation(t *testing.T) {
	pools := []v1alpha1.VIPPool{pool("a", "east", "203.0.113.0/25")}
	nodes := []*corev1.Node{gw("gw-1", "198.18.2.2", true, "")}
	services := []*corev1.Service{svc("team", "web", "east", 1, []string{"203.0.113.10"}, port(80, corev1.ProtocolTCP), port(443, corev1.ProtocolTCP))}
	tests := map[string]struct {
		encap *v1alpha1.Encapsulation
		want  model.Encap
		err   string
	}{
		"absent is ipip":   {nil, model.Encap{}, ""},
		"ipip":             {&v1alpha1.Encapsulation{Type: "ipip"}, model.Encap{}, ""},
		"gue with a port":  {&v1alpha1.Encapsulation{Type: "gue", Port: 6080}, model.GUE(6080), ""},
		"gue without port": {&v1alpha1.Encapsulation{Type: "gue"}, model.Encap{}, `L4Cluster east: spec.encapsulation.port: gue needs`},
		"ipip with a port": {&v1alpha1.Encapsulation{Type: "ipip", Port: 6080}, model.Encap{}, `L4Cluster east: spec.encapsulation.port: 6080 is set but only gue`},
		"unknown type":     {&v1alpha1.Encapsulation{Type: "vxlan", Port: 4789}, model.Encap{}, `spec.encapsulation.type: "vxlan" is not one of ipip, gue`},
		"port too large":   {&v1alpha1.Encapsulation{Type: "gue", Port: 70000}, model.Encap{}, `spec.encapsulation.port: 70000 is not 1..65535`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := l4("east", "")
			c.Spec.Encapsulation = tc.encap
			d, errs := BuildDesired(services, nodes, pools, []v1alpha1.L4Cluster{c}, nil, "east")
			if tc.err != "" {
				if len(errs) != 1 || !errors.Is(errs[0], sharedkube.ErrNotBuilt) || !strings.Contains(errs[0].Error(), tc.err) {
					t.Fatalf("errors %v, want one that blocks the model and says %q", errs, tc.err)
				}
				return
			}
			if len(errs) != 0 {
				t.Fatalf("errors %v", errs)
			}
			if len(d.Services) != 2 {
				t.Fatalf("services %v", d.Services)
			}
			for _, s := range d.Services {
				if s.Encap != tc.want {
					t.Errorf("service %s encap %v, want %v", s.Key(), s.Encap, tc.want)
				}
			}
		})
	}
}
