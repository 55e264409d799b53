package kube

import (
	"net/netip"
	"slices"
	"testing"

	sharedkube "github.com/tlbproject/tlb/internal/kube"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/kube/kubetest"
	"github.com/tlbproject/tlb/tlb/model"
)

func rs(addr string, w int) model.RealServer {
	return model.RealServer{Addr: netip.MustParseAddr(addr), Weight: w}
}

func vs(vip string, p uint16, proto model.Protocol, rss ...model.RealServer) model.Service {
	return model.Service{VIP: netip.MustParseAddr(vip), Port: p, Protocol: proto, RealServers: rss}
}

func TestBuildDesired(t *testing.T) {
	pools := []v1alpha1.VIPPool{pool("a", "east", "203.0.113.0/25"), pool("b", "east", "198.51.100.0/24"), pool("c", "west", "203.0.113.128/25")}
	clusters := []v1alpha1.L4Cluster{l4("east", ""), l4("west", "wg")}
	nodes := []*corev1.Node{gw("gw-2", "198.18.2.3", true, ""), gw("gw-1", "198.18.2.2", true, ""), gw("gw-w", "198.18.3.2", true, "wg")}
	ranges := []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/25")}
	both := []model.RealServer{rs("198.18.2.2", 1), rs("198.18.2.3", 1)}
	tcp80 := port(80, corev1.ProtocolTCP)

	tests := map[string]struct {
		services []*corev1.Service
		nodes    []*corev1.Node
		pools    []v1alpha1.VIPPool
		cluster  string
		want     model.Desired
		errs     []string // substrings, one per expected error, in order
		blocking bool
	}{
		"one service per VIP, port and protocol": {
			services: []*corev1.Service{
				svc("team", "web", "east", 1, []string{"203.0.113.10"}, tcp80, port(443, corev1.ProtocolTCP), port(53, corev1.ProtocolUDP)),
				svc("team", "dns", "east", 1, []string{"198.51.100.7"}, port(53, corev1.ProtocolUDP), port(53, corev1.ProtocolTCP)),
			},
			nodes: nodes, pools: pools, cluster: "east",
			want: model.Desired{VIPRanges: ranges, Services: []model.Service{
				vs("198.51.100.7", 53, model.TCP, both...), vs("198.51.100.7", 53, model.UDP, both...),
				vs("203.0.113.10", 53, model.UDP, both...), vs("203.0.113.10", 80, model.TCP, both...), vs("203.0.113.10", 443, model.TCP, both...),
			}}.Sorted(),
		},
		"other clusters, classes and types are not served": {
			services: func() []*corev1.Service {
				other := svc("team", "west", "west", 1, []string{"203.0.113.130"}, tcp80)
				class := svc("team", "nginx", "east", 1, []string{"203.0.113.11"}, tcp80)
				c := "example.com/other"
				class.Spec.LoadBalancerClass = &c
				cip := svc("team", "cip", "east", 1, []string{"203.0.113.12"}, tcp80)
				cip.Spec.Type = corev1.ServiceTypeClusterIP
				optIn := svc("team", "optin", "east", 1, []string{"203.0.113.13"}, tcp80)
				optIn.Spec.LoadBalancerClass = nil
				optIn.Annotations[api.AnnotationEnabled] = "true"
				return []*corev1.Service{other, class, cip, optIn}
			}(),
			nodes: nodes, pools: pools, cluster: "east",
			want: model.Desired{VIPRanges: ranges, Services: []model.Service{vs("203.0.113.13", 80, model.TCP, both...)}}.Sorted(),
		},
		"unready gateway stays at weight 0, other groups and plain nodes are not real servers": {
			services: []*corev1.Service{svc("team", "web", "east", 1, []string{"203.0.113.10"}, tcp80)},
			nodes: func() []*corev1.Node {
				plain := gw("worker", "198.18.9.9", true, "")
				delete(plain.Labels, api.LabelGateway)
				return []*corev1.Node{gw("gw-1", "198.18.2.2", true, ""), gw("gw-2", "198.18.2.3", false, ""), gw("gw-w", "198.18.3.2", true, "wg"), plain}
			}(),
			pools: pools, cluster: "east",
			want: model.Desired{VIPRanges: ranges, Services: []model.Service{vs("203.0.113.10", 80, model.TCP, rs("198.18.2.2", 1), rs("198.18.2.3", 0))}}.Sorted(),
		},
		"gateway group of the cluster picks its nodes": {
			services: []*corev1.Service{svc("team", "west", "west", 1, []string{"203.0.113.130"}, tcp80)},
			nodes:    nodes, pools: pools, cluster: "west",
			want: model.Desired{VIPRanges: []netip.Prefix{netip.MustParsePrefix("203.0.113.128/25")},
				Services: []model.Service{vs("203.0.113.130", 80, model.TCP, rs("198.18.3.2", 1))}}.Sorted(),
		},
		"bad objects are left out with errors naming them": {
			services: []*corev1.Service{
				svc("team", "web", "east", 1, []string{"203.0.113.10"}, tcp80),
				svc("team", "outside", "east", 1, []string{"192.0.2.1"}, tcp80),
				svc("team", "garbage", "east", 1, []string{"not-an-ip"}, tcp80),
			},
			nodes: []*corev1.Node{gw("gw-1", "198.18.2.2", true, ""), gw("gw-noip", "", true, ""), gw("gw-dup", "198.18.2.2", true, "")},
			pools: append([]v1alpha1.VIPPool{pool("bad", "east", "203.0.113.1/24"), pool("v6", "east", "2001:db8::/64")}, pools...), cluster: "east",
			want: model.Desired{VIPRanges: append(slices.Clone(ranges), netip.MustParsePrefix("2001:db8::/64")), Services: []model.Service{vs("203.0.113.10", 80, model.TCP, rs("198.18.2.2", 1))}}.Sorted(),
			errs: []string{
				`VIPPool bad: spec.cidrs[0]: "203.0.113.1/24" is not a CIDR in network form`,
				`Service team/garbage: status.loadBalancer.ingress[0].ip: "not-an-ip" is not an IP address`,
				`Service team/outside: status.loadBalancer.ingress[0].ip: 192.0.2.1 is in no VIPPool of L4 cluster "east"`,
				`Node gw-dup: status.addresses: InternalIP 198.18.2.2 is also node gw-1's`,
				`Node gw-noip: status.addresses: no IPv4 InternalIP`,
			},
		},
		"dual-stack Service: each VIP tunnelled to the nodes' InternalIPs of its family": {
			services: []*corev1.Service{svc("team", "dual", "east", 1, []string{"203.0.113.10", "2001:db8::10"}, tcp80)},
			nodes: func() []*corev1.Node {
				n1, n2 := gw("gw-1", "198.18.2.2", true, ""), gw("gw-2", "198.18.2.3", true, "")
				n1.Status.Addresses = append(n1.Status.Addresses,
					corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "fe80::1"}, // link-local: not a tunnel end
					corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "2001:db8:18::2"})
				return []*corev1.Node{n1, n2}
			}(),
			pools: append([]v1alpha1.VIPPool{pool("v6", "east", "2001:db8::/64")}, pools...), cluster: "east",
			want: model.Desired{VIPRanges: append(slices.Clone(ranges), netip.MustParsePrefix("2001:db8::/64")), Services: []model.Service{
				vs("203.0.113.10", 80, model.TCP, both...), vs("2001:db8::10", 80, model.TCP, rs("2001:db8:18::2", 1)),
			}}.Sorted(),
			errs: []string{`Node gw-2: status.addresses: no IPv6 InternalIP`},
		},
		"older Service keeps a disputed VIP and port": {
			services: []*corev1.Service{
				svc("team", "young", "east", 1, []string{"203.0.113.10"}, tcp80, port(81, corev1.ProtocolTCP)),
				svc("team", "old", "east", 5, []string{"203.0.113.10"}, tcp80),
			},
			nodes: nodes, pools: pools, cluster: "east",
			want: model.Desired{VIPRanges: ranges, Services: []model.Service{vs("203.0.113.10", 80, model.TCP, both...), vs("203.0.113.10", 81, model.TCP, both...)}}.Sorted(),
			errs: []string{`Service team/young: spec.ports[0]: 203.0.113.10:80/tcp is already served for the older Service team/old`},
		},
		"no gateways: services with no real servers": {
			services: []*corev1.Service{svc("team", "web", "east", 1, []string{"203.0.113.10"}, tcp80)},
			pools:    pools, cluster: "east",
			want: model.Desired{VIPRanges: ranges, Services: []model.Service{vs("203.0.113.10", 80, model.TCP)}}.Sorted(),
		},
		"missing L4Cluster builds nothing": {
			services: []*corev1.Service{svc("team", "web", "north", 1, []string{"203.0.113.10"}, tcp80)},
			nodes:    nodes, pools: pools, cluster: "north",
			errs:     []string{`model not built: L4Cluster "north" does not exist`},
			blocking: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, errs := BuildDesired(tc.services, tc.nodes, tc.pools, clusters, nil, tc.cluster)
			if b := sharedkube.Blocking(errs); b != tc.blocking {
				t.Errorf("Blocking = %v, want %v (errors %v)", b, tc.blocking, errs)
			}
			kubetest.ErrorsContain(t, errs, tc.errs)
			if tc.blocking {
				return
			}
			if !equalDesired(got, tc.want) {
				t.Errorf("model:\n got  %+v\n want %+v", got, tc.want)
			}
			for _, s := range got.Services {
				if s.Scheduler != model.Maglev || len(s.Flags) != 2 {
					t.Errorf("service %s: scheduler %q flags %v, want mh with mh-fallback and mh-port", s, s.Scheduler, s.Flags)
				}
			}
		})
	}
}

// equalDesired compares two sorted models field by field.
func equalDesired(a, b model.Desired) bool {
	if len(a.Services) != len(b.Services) || len(a.VIPRanges) != len(b.VIPRanges) {
		return false
	}
	for i := range a.VIPRanges {
		if a.VIPRanges[i] != b.VIPRanges[i] {
			return false
		}
	}
	for i := range a.Services {
		x, y := a.Services[i], b.Services[i]
		if x.Key() != y.Key() || x.Scheduler != y.Scheduler || len(x.Flags) != len(y.Flags) || len(x.RealServers) != len(y.RealServers) {
			return false
		}
		for j := range x.Flags {
			if x.Flags[j] != y.Flags[j] {
				return false
			}
		}
		for j := range x.RealServers {
			if x.RealServers[j] != y.RealServers[j] {
				return false
			}
		}
	}
	return true
}

func TestBuildDesiredDoesNotModifyInputs(t *testing.T) {
	s := svc("team", "web", "east", 1, []string{"203.0.113.10"}, port(80, ""))
	n := []*corev1.Node{gw("gw-2", "198.18.2.3", true, ""), gw("gw-1", "198.18.2.2", true, "")}
	before := s.DeepCopy()
	d, errs := BuildDesired([]*corev1.Service{s}, n, []v1alpha1.VIPPool{pool("a", "east", "203.0.113.0/24")}, []v1alpha1.L4Cluster{l4("east", "")}, nil, "east")
	if len(errs) != 0 || len(d.Services) != 1 || d.Services[0].Protocol != model.TCP {
		t.Fatalf("empty protocol should mean TCP: %+v %v", d, errs)
	}
	if n[0].Name != "gw-2" {
		t.Error("BuildDesired reordered the caller's node slice")
	}
	if s.Spec.Ports[0].Protocol != before.Spec.Ports[0].Protocol || len(s.Status.LoadBalancer.Ingress) != 1 {
		t.Error("BuildDesired changed the Service")
	}
}
