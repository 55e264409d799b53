package gatewaywatch

import (
	"context"
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

func meta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

// world is a Gateway, an HTTPRoute and a ListenerSet in each of namespaces a and b, a
// Service in a, and a Namespace.
func world(t *testing.T) Options {
	t.Helper()
	ctx := context.Background()
	gc := gwfake.NewSimpleClientset()
	for _, ns := range []string{"a", "b"} {
		if _, err := gc.GatewayV1().Gateways(ns).Create(ctx, &gatewayv1.Gateway{ObjectMeta: meta(ns, "web")}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := gc.GatewayV1().HTTPRoutes(ns).Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: meta(ns, "r")}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := gc.GatewayV1().ListenerSets(ns).Create(ctx, &gatewayv1.ListenerSet{ObjectMeta: meta(ns, "ls")}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kc := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, &corev1.Service{ObjectMeta: meta("a", "s")})
	dc := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		ClassConfigResource: "GatewayClassConfigList", TrafficPolicyResource: "TrafficPolicyList",
	})
	return Options{Gateway: gc, Kube: kc, Dynamic: dc}
}

// inputs starts a Watch of o, waits for its caches and lists them.
func inputs(t *testing.T, o Options) gatewayapi.Inputs {
	t.Helper()
	w, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer func() { close(stop); w.Shutdown() }()
	w.Start(stop)
	if !cache.WaitForCacheSync(stop, w.Synced()...) {
		t.Fatal("caches did not sync")
	}
	in, err := w.Inputs(gatewayapi.Inputs{Secrets: []*corev1.Secret{{ObjectMeta: meta("a", "kept")}}})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestWatchListsWhatItIsAsked: every namespace by default; only the
// namespaces named; only the kinds served; the core kinds only with
// Core; what the caller passed in is kept.
func TestWatchListsWhatItIsAsked(t *testing.T) {
	o := world(t)
	in := inputs(t, o)
	if len(in.Gateways) != 2 || len(in.HTTPRoutes) != 2 || len(in.ListenerSets) != 2 || len(in.Namespaces) != 1 || len(in.Services) != 0 || len(in.Secrets) != 1 {
		t.Fatalf("every namespace, no core: %d gateways, %d routes, %d listener sets, %d namespaces, %d services, %d secrets",
			len(in.Gateways), len(in.HTTPRoutes), len(in.ListenerSets), len(in.Namespaces), len(in.Services), len(in.Secrets))
	}
	o.Namespaces = []string{"b"}
	o.Served = Served{Gateway: map[string]bool{"gatewayclasses": true, "gateways": true}, TLB: map[string]bool{}}
	o.Core = true
	in = inputs(t, o)
	if len(in.Gateways) != 1 || in.Gateways[0].Namespace != "b" || len(in.HTTPRoutes) != 0 || len(in.ListenerSets) != 0 || len(in.Services) != 1 {
		t.Fatalf("namespace b, no routes or sets served, core: gateways %v, %d routes, %d sets, %d services", in.Gateways, len(in.HTTPRoutes), len(in.ListenerSets), len(in.Services))
	}
}

// TestVIPAddresses: a Service counts when it is labelled and controlled
// by a Gateway, and keep (when set) accepts it.
func TestVIPAddresses(t *testing.T) {
	yes := true
	vip := func(name, gw, ip string, labelled bool) *corev1.Service {
		s := &corev1.Service{ObjectMeta: meta("a", name)}
		if labelled {
			s.Labels = map[string]string{api.LabelOwningGateway: "a." + gw}
		}
		s.OwnerReferences = []metav1.OwnerReference{{Kind: "Gateway", Name: gw, Controller: &yes}}
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}, {Hostname: "not-an-ip"}}
		return s
	}
	services := []*corev1.Service{vip("web-vip", "web", "203.0.113.1", true), vip("other", "web", "203.0.113.2", true),
		vip("unlabelled", "api", "203.0.113.3", false)}
	web := types.NamespacedName{Namespace: "a", Name: "web"}
	if got := VIPAddresses(services, nil); !reflect.DeepEqual(got, map[types.NamespacedName][]netip.Addr{
		web: {netip.MustParseAddr("203.0.113.1"), netip.MustParseAddr("203.0.113.2")}}) {
		t.Fatalf("without keep: %v", got)
	}
	keep := func(_ types.NamespacedName, s *corev1.Service) bool { return s.Name == "web-vip" }
	if got := VIPAddresses(services, keep); !reflect.DeepEqual(got, map[types.NamespacedName][]netip.Addr{web: {netip.MustParseAddr("203.0.113.1")}}) {
		t.Fatalf("with keep: %v", got)
	}
}
