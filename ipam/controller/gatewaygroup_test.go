package controller

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/poll"
	"github.com/tlbproject/tlb/ipam"
)

func l4cluster(name, env, group string) v1alpha1.L4Cluster {
	cl := v1alpha1.L4Cluster{TypeMeta: metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.L4ClusterSpec{Environment: env}}
	if group != "" {
		cl.Labels = map[string]string{api.AnnotationGatewayGroup: group}
	}
	return cl
}

func TestCheckGatewayGroup(t *testing.T) {
	clusters := []v1alpha1.L4Cluster{l4cluster("prod-a", "prod", "edge"), l4cluster("prod-b", "prod", ""), l4cluster("dev-a", "dev", "lab")}
	pools := []v1alpha1.VIPPool{*pool("prod-pool", "prod-a", "203.0.113.0/28"), *pool("dev-pool", "dev-a", "198.51.100.0/28")}
	for name, tc := range map[string]struct {
		group string
		req   ipam.Request
		want  string // "" for served, else a part of the error
	}{
		"labelled group of the environment": {group: "edge", req: ipam.Request{Environment: "prod"}},
		"default group, unlabelled cluster": {group: "default", req: ipam.Request{Environment: "prod"}},
		"group of another environment":      {group: "lab", req: ipam.Request{Environment: "prod"}, want: `no L4Cluster of environment "prod" serves gateway group "lab"`},
		"unknown group":                     {group: "nope", req: ipam.Request{Environment: "dev"}, want: `gateway group "nope"`},
		"environment from the pool":         {group: "lab", req: ipam.Request{Pool: "dev-pool"}},
		"pool of another environment":       {group: "edge", req: ipam.Request{Pool: "dev-pool"}, want: `environment "dev"`},
		"environment from the address":      {group: "edge", req: ipam.Request{Addresses: []netip.Addr{netip.MustParseAddr("203.0.113.5")}}},
		"address in no pool":                {group: "edge", req: ipam.Request{Addresses: []netip.Addr{netip.MustParseAddr("192.0.2.1")}}, want: "environment is unknown"},
	} {
		t.Run(name, func(t *testing.T) {
			err := CheckGatewayGroup(tc.group, tc.req, pools, clusters)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestControllerRefusesUnservedGatewayGroup: a Gateway's VIP Service whose
// gateway group no L4Cluster of its environment serves gets no VIP and a
// warning Event; one whose group is served gets its VIP.
func TestControllerRefusesUnservedGatewayGroup(t *testing.T) {
	class := api.LoadBalancerClass
	svc := func(name, group string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{
				api.AnnotationEnvironment: "prod", api.AnnotationGatewayGroup: group}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class},
		}
	}
	kc := fake.NewClientset(svc("served", "edge"), svc("foreign", "lab"))
	var objs []runtime.Object
	for _, o := range []any{ptr(l4cluster("c", "prod", "edge")), ptr(l4cluster("d", "dev", "lab")), pool("p", "c", "203.0.113.0/30"), pool("q", "d", "198.51.100.0/30")} {
		objs = append(objs, unstr(t, o))
	}
	dc := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		v1alpha1.VIPPoolResource: "VIPPoolList", v1alpha1.L4ClusterResource: "L4ClusterList",
	}, objs...)
	c, ctx := runController(t, Options{Client: kc, Dynamic: dc})

	poll.Explained(t, 10*time.Second, "served has a VIP, foreign a GatewayGroupNotServed Event", func() (bool, string) {
		served, err := kc.CoreV1().Services("ns").Get(ctx, "served", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		evs, err := kc.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		refused := false
		for _, e := range evs.Items {
			refused = refused || (e.InvolvedObject.Name == "foreign" && e.Reason == ReasonGatewayGroupNotServed)
		}
		return len(served.Status.LoadBalancer.Ingress) == 1 && refused, fmt.Sprintf("served status %+v, %d events", served.Status, len(evs.Items))
	})
	foreign, _ := kc.CoreV1().Services("ns").Get(ctx, "foreign", metav1.GetOptions{})
	if len(foreign.Status.LoadBalancer.Ingress) != 0 {
		t.Fatalf("foreign got VIP %v although no L4Cluster of prod serves group lab", foreign.Status.LoadBalancer.Ingress)
	}
	if _, held := c.alloc.Lookup("ns/foreign"); held {
		t.Fatalf("the allocator holds a VIP for ns/foreign")
	}
}
