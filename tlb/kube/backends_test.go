package kube

import (
	"io"
	"log/slog"
	"net/netip"
	"reflect"
	"testing"

	sharedkube "github.com/tlbproject/tlb/internal/kube"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/kube/kubetest"
	"github.com/tlbproject/tlb/tlb/model"
)

// endpoint is one endpoint; ready nil leaves the condition unset.
type endpoint struct {
	addr  string
	ready *bool
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// slice is an EndpointSlice of Service ns/svc.
func slice(ns, name, svc string, eps ...endpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, AddressType: discoveryv1.AddressTypeIPv4}
	for _, e := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.addr}, Conditions: discoveryv1.EndpointConditions{Ready: e.ready}})
	}
	return s
}

func l7svc(ns, name string, vips ...string) *corev1.Service {
	s := svc(ns, name, "east", 1, vips, port(80, corev1.ProtocolTCP))
	s.Annotations[api.AnnotationL7] = "true"
	return s
}

// TestBuildDesiredL7: EndpointSlices -> per-VIP L7 state. An L7 Service
// is an L7 service of each of its VIPs that the model serves; its ready
// backends are the distinct addresses of its slices' endpoints whose
// Ready condition is unset or true.
func TestBuildDesiredL7(t *testing.T) {
	pools := []v1alpha1.VIPPool{pool("a", "east", "203.0.113.0/24")}
	clusters := []v1alpha1.L4Cluster{l4("east", "")}
	nodes := []*corev1.Node{gw("gw-1", "198.18.2.2", true, "")}
	vipA, vipB := netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("203.0.113.20")
	tests := map[string]struct {
		services []*corev1.Service
		slices   []*discoveryv1.EndpointSlice
		want     []model.L7Service
	}{
		"ready unset or true counts, false does not, an address in two slices counts once": {
			services: []*corev1.Service{l7svc("team", "web", "203.0.113.10")},
			slices: []*discoveryv1.EndpointSlice{
				slice("team", "web-1", "web", endpoint{"10.0.0.1", nil}, endpoint{"10.0.0.2", yes()}, endpoint{"10.0.0.3", no()}),
				slice("team", "web-2", "web", endpoint{"10.0.0.2", yes()}, endpoint{"10.0.0.4", no()}),
			},
			want: []model.L7Service{{VIP: vipA, Name: "team/web", ReadyBackends: 2}},
		},
		"no slices: an L7 service with no ready backend": {
			services: []*corev1.Service{l7svc("team", "web", "203.0.113.10")},
			want:     []model.L7Service{{VIP: vipA, Name: "team/web"}},
		},
		"every endpoint not ready": {
			services: []*corev1.Service{l7svc("team", "web", "203.0.113.10")},
			slices:   []*discoveryv1.EndpointSlice{slice("team", "web-1", "web", endpoint{"10.0.0.1", no()})},
			want:     []model.L7Service{{VIP: vipA, Name: "team/web"}},
		},
		"slices of other Services and namespaces are not counted": {
			services: []*corev1.Service{l7svc("team", "web", "203.0.113.10")},
			slices: []*discoveryv1.EndpointSlice{slice("team", "api-1", "api", endpoint{"10.0.0.1", yes()}),
				slice("other", "web-1", "web", endpoint{"10.0.0.2", yes()}), slice("team", "unlabelled", "", endpoint{"10.0.0.3", yes()})},
			want: []model.L7Service{{VIP: vipA, Name: "team/web"}},
		},
		"two L7 Services on one VIP and one on two VIPs; a plain Service has none": {
			services: []*corev1.Service{
				l7svc("team", "web", "203.0.113.10", "203.0.113.20"),
				func() *corev1.Service { s := l7svc("team", "api", "203.0.113.10"); s.Spec.Ports[0].Port = 81; return s }(),
				svc("team", "plain", "east", 1, []string{"203.0.113.30"}, port(80, corev1.ProtocolTCP)),
				func() *corev1.Service {
					s := l7svc("team", "off", "203.0.113.40")
					s.Annotations[api.AnnotationL7] = "false"
					return s
				}(),
			},
			slices: []*discoveryv1.EndpointSlice{slice("team", "api-1", "api", endpoint{"10.0.0.9", nil})},
			want: []model.L7Service{{VIP: vipA, Name: "team/api", ReadyBackends: 1}, {VIP: vipA, Name: "team/web"},
				{VIP: vipB, Name: "team/web"}},
		},
		"a Gateway's VIP Service is no L7 service, even annotated tlb.io/l7": {
			services: []*corev1.Service{func() *corev1.Service {
				s := l7svc("team", "shop-vip", "203.0.113.10")
				s.Labels = map[string]string{api.LabelOwningGateway: "team.shop"}
				return s
			}()},
		},
		"a VIP the model does not serve (port taken by an older Service) gets no L7 service": {
			services: []*corev1.Service{
				svc("team", "old", "east", 5, []string{"203.0.113.10"}, port(80, corev1.ProtocolTCP)),
				l7svc("team", "web", "203.0.113.10", "203.0.113.20"),
			},
			want: []model.L7Service{{VIP: vipB, Name: "team/web"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			d, errs := BuildDesired(tc.services, nodes, pools, clusters, tc.slices, "east")
			if sharedkube.Blocking(errs) {
				t.Fatalf("model not built: %v", errs)
			}
			if !reflect.DeepEqual(d.L7, tc.want) {
				t.Errorf("L7 = %+v, want %+v", d.L7, tc.want)
			}
		})
	}
}

// TestSourceFollowsEndpointSlices runs the director's Source against fake
// clients: the L7 Service's ready count follows its EndpointSlices, and a
// change to a slice of a Service that is not L7 emits nothing.
func TestSourceFollowsEndpointSlices(t *testing.T) {
	kc := fake.NewClientset(gw("gw-1", "198.18.2.2", true, ""), l7svc("team", "web", "203.0.113.10"),
		svc("team", "plain", "east", 1, []string{"203.0.113.20"}, port(80, corev1.ProtocolTCP)),
		slice("team", "web-1", "web", endpoint{"10.0.0.1", yes()}))
	src, err := NewSource(kc, kubetest.Dynamic(t, l4("east", ""), pool("a", "east", "203.0.113.0/24")), "east",
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	models := kubetest.RunSource(t, src.Run)
	vip := netip.MustParseAddr("203.0.113.10")
	want := func(n int) []model.L7Service {
		return []model.L7Service{{VIP: vip, Name: "team/web", ReadyBackends: n}}
	}
	if d := models.Next("first sync"); !reflect.DeepEqual(d.L7, want(1)) {
		t.Fatalf("first model L7 = %+v, want %+v", d.L7, want(1))
	}

	// The only backend turns unready: no ready backend.
	slices := kc.DiscoveryV1().EndpointSlices("team")
	if _, err := slices.Update(ctx, slice("team", "web-1", "web", endpoint{"10.0.0.1", no()}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := models.Next("the backend turned unready"); !reflect.DeepEqual(d.L7, want(0)) {
		t.Fatalf("L7 = %+v, want %+v", d.L7, want(0))
	}
	// A slice of the plain Service: same model, nothing emitted.
	if _, err := slices.Create(ctx, slice("team", "plain-1", "plain", endpoint{"10.0.1.1", yes()}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	models.Quiet("a slice of a Service that is not L7 was added")
	// A new slice with a ready backend: back.
	if _, err := slices.Create(ctx, slice("team", "web-2", "web", endpoint{"10.0.0.7", nil}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := models.Next("a ready backend appeared"); !reflect.DeepEqual(d.L7, want(1)) {
		t.Fatalf("L7 = %+v, want %+v", d.L7, want(1))
	}
	// Deleting it: none again.
	if err := slices.Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := models.Next("the ready backend's slice was deleted"); !reflect.DeepEqual(d.L7, want(0)) {
		t.Fatalf("L7 = %+v, want %+v", d.L7, want(0))
	}
}

func TestTrimEndpointSliceKeepsWhatIsCounted(t *testing.T) {
	s := slice("team", "web-1", "web", endpoint{"10.0.0.1", yes()}, endpoint{"10.0.0.2", no()})
	s.Annotations = map[string]string{"big": "x"}
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	host := "node-1"
	s.Endpoints[0].NodeName = &host
	out, err := trimEndpointSlice(s)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*discoveryv1.EndpointSlice)
	if got.Annotations != nil || got.ManagedFields != nil || got.Endpoints[0].NodeName != nil {
		t.Errorf("trimmed slice keeps more than needed: %+v", got)
	}
	if !reflect.DeepEqual(ReadyBackends([]*discoveryv1.EndpointSlice{got}), ReadyBackends([]*discoveryv1.EndpointSlice{s})) {
		t.Error("trimming changed the count")
	}
	if s.Annotations == nil {
		t.Error("trimming changed its input")
	}
}
