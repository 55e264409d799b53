package kube

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/internal/kube/kubetest"
	"github.com/tlbproject/tlb/netd/model"
)

func l4(name, group string) v1alpha1.L4Cluster {
	c := v1alpha1.L4Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if group != "" {
		c.Labels = map[string]string{api.LabelGatewayGroup: group}
	}
	return c
}

func pool(name, cluster string, cidrs ...string) v1alpha1.VIPPool {
	return v1alpha1.VIPPool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.VIPPoolSpec{L4Cluster: cluster, CIDRs: cidrs}}
}

func node(name string, gateway bool, group string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if gateway {
		n.Labels[api.LabelGateway] = "true"
	}
	if group != "" {
		n.Labels[api.LabelGatewayGroup] = group
	}
	return n
}

func svc(name, cluster string, vips ...string) *corev1.Service {
	class := api.LoadBalancerClass
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0)),
			Annotations: map[string]string{api.AnnotationAssignedL4Cluster: cluster}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	for _, v := range vips {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: v})
	}
	return s
}

func addrs(s ...string) []netip.Addr {
	out := []netip.Addr{}
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

func TestBuildGateway(t *testing.T) {
	clusters := []v1alpha1.L4Cluster{l4("east", ""), l4("east-2", ""), l4("west", "wg")}
	pools := []v1alpha1.VIPPool{pool("a", "east", "203.0.113.0/26"), pool("a2", "east-2", "203.0.113.64/26"), pool("w", "west", "203.0.113.128/25"), pool("v6", "east", "2001:db8::/64")}
	services := []*corev1.Service{
		svc("web", "east", "203.0.113.10"),
		svc("api", "east-2", "203.0.113.70", "203.0.113.71"),
		svc("wst", "west", "203.0.113.130"),
		svc("lost", "east", "203.0.113.200"),
		svc("six", "east", "2001:db8::1"),
	}
	l7 := svc("front", "east", "203.0.113.20")
	l7.Annotations[api.AnnotationL7] = "true"
	l7.Spec.Ports = []corev1.ServicePort{{Port: 443}, {Port: 80, Protocol: corev1.ProtocolTCP}, {Port: 443, Protocol: corev1.ProtocolUDP}, {Port: 8443}}
	l76 := svc("front6", "east", "2001:db8::2")
	l76.Annotations[api.AnnotationL7] = "true"
	l76.Spec.Ports = []corev1.ServicePort{{Port: 443}}
	services = append(services, l7, l76)
	gwVIP := svc("shop-vip", "east", "203.0.113.30")
	gwVIP.Labels = map[string]string{api.LabelOwningGateway: "team.shop"}
	gwVIP.Spec.Ports = []corev1.ServicePort{{Name: "tcp-443", Port: 443, Protocol: corev1.ProtocolTCP}}
	services = append(services, gwVIP)
	listeners := map[uint16]uint16{443: 10443, 80: 10080}
	tests := map[string]struct {
		node  *corev1.Node
		want  []netip.Addr
		errs  []string
		none  bool
		ports []model.PortMap
	}{
		"default group serves every cluster without a group": {
			node: node("gw-1", true, ""),
			want: addrs("203.0.113.10", "203.0.113.20", "203.0.113.30", "203.0.113.70", "203.0.113.71", "2001:db8::1", "2001:db8::2"),
			ports: []model.PortMap{
				{VIP: netip.MustParseAddr("203.0.113.20"), Protocol: "tcp", Port: 80, TargetPort: 10080},
				{VIP: netip.MustParseAddr("203.0.113.20"), Protocol: "tcp", Port: 443, TargetPort: 10443},
				// A Gateway's VIP Service maps its listener ports too.
				{VIP: netip.MustParseAddr("203.0.113.30"), Protocol: "tcp", Port: 443, TargetPort: 10443},
			},
			errs: []string{`Service team/front6: status.loadBalancer.ingress: 2001:db8::2 is bound, but the port map redirects IPv4 VIPs only`,
				`Service team/lost: status.loadBalancer.ingress[0].ip: 203.0.113.200 is in no VIPPool of L4 cluster "east"`},
		},
		"named group serves only its clusters": {
			node: node("gw-w", true, "wg"),
			want: addrs("203.0.113.130"),
		},
		"group that serves no cluster binds nothing": {
			node: node("gw-x", true, "nobody"),
			want: addrs(),
		},
		"node without the gateway label binds nothing": {
			node: node("worker", false, ""),
			want: addrs(),
		},
		"missing node is not built": {
			errs: []string{`model not built: Node "gw-1" is not in the cache`},
			none: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			nodeName := "gw-1"
			if tc.node != nil {
				nodeName = tc.node.Name
			}
			local := Local{Tunnel: "tunl0", MSS: 1400, ListenerPorts: listeners,
				MSSPolicy: model.MSSPolicy{Mode: model.MSSFromMTU, MTU: 9000}, GUEPort: 6080}
			g, errs := BuildGateway(tc.node, services, pools, clusters, nodeName, local)
			if sharedkube.Blocking(errs) != tc.none {
				t.Fatalf("Blocking = %v, want %v (%v)", !tc.none, tc.none, errs)
			}
			kubetest.ErrorsContain(t, errs, tc.errs)
			if tc.none {
				return
			}
			if g.Tunnel != "tunl0" || g.MSS != 1400 || !slices.Equal(g.VIPs, tc.want) {
				t.Errorf("gateway = %+v, want tunl0, MSS 1400, VIPs %v", g, tc.want)
			}
			if g.MSSPolicy != local.MSSPolicy || g.GUEPort != 6080 {
				t.Errorf("gateway = %+v, want the node's MSS policy and GUE port", g)
			}
			if !slices.Equal(g.Ports, tc.ports) || g.Ports == nil {
				t.Errorf("ports = %v, want %v (never nil, as in the file mode)", g.Ports, tc.ports)
			}
		})
	}
}

func TestDefaultLocal(t *testing.T) {
	if l := DefaultLocal(); l.Tunnel != model.DefaultTunnel || l.MSS != 0 || l.MSSPolicy != (model.MSSPolicy{Mode: model.MSSFromMTU}) {
		t.Errorf("DefaultLocal() = %+v", l)
	}
}
