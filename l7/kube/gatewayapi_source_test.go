package kube

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlbproject/tlb/api"
	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/model"
)

// fakeBuild stands in for gatewayapi.Build: a Gateway per Gateway object
// (group from its class's GatewayClassConfig, VIP from Addresses) and a
// Service per HTTPRoute, so that what the Source hands Build can be seen
// in the published model. It records its inputs.
type fakeBuild struct {
	mu     sync.Mutex
	calls  int
	inputs gatewayapi.Inputs
}

func (f *fakeBuild) build(in gatewayapi.Inputs) gatewayapi.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.inputs = in
	group := map[string]string{}
	for _, c := range in.ClassConfigs {
		group[c.Name] = c.Spec.Group()
	}
	var cfg model.Config
	for _, gw := range in.Gateways {
		vips := in.Addresses[types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}]
		if len(vips) == 0 {
			continue
		}
		cfg.Gateways = append(cfg.Gateways, model.Gateway{Name: gw.Namespace + "." + gw.Name, Group: group[string(gw.Spec.GatewayClassName)],
			Listeners: []model.Listener{{Name: "http", VIP: vips[0], Port: 80, Protocol: model.HTTP}}})
	}
	for _, r := range in.HTTPRoutes {
		cfg.Services = append(cfg.Services, model.Service{Name: "route." + r.Namespace + "." + r.Name, Group: "default"})
	}
	return gatewayapi.Result{Config: cfg}
}

func (f *fakeBuild) seen() (int, gatewayapi.Inputs) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.inputs
}

var (
	gccResource = tlbv1alpha1.SchemeGroupVersion.WithResource(tlbv1alpha1.ResourceGatewayClassConfigs)
	tpResource  = tlbv1alpha1.SchemeGroupVersion.WithResource(tlbv1alpha1.ResourceTrafficPolicies)
)

func classConfig(name, group string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(tlbv1alpha1.SchemeGroupVersion.WithKind(tlbv1alpha1.KindGatewayClassConfig))
	u.SetName(name)
	u.Object["spec"] = map[string]any{"gatewayGroup": group}
	return u
}

func gateway(ns, name, class string) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class)}}
}

// vipService is the VIP Service the Gateway controller makes for a
// Gateway, with the address the IPAM gave it.
func vipService(ns, gw, vip string) *corev1.Service {
	s := service(ns, "gw-"+gw, nil, vip, port("http", 80))
	s.Labels = map[string]string{api.LabelOwningGateway: ns + "." + gw}
	yes := true
	s.OwnerReferences = []metav1.OwnerReference{{APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway", Name: gw, UID: "u", Controller: &yes}}
	return s
}

// gatewayAPIResources is what discovery says the API server serves.
func gatewayAPIResources() []*metav1.APIResourceList {
	return []*metav1.APIResourceList{
		{GroupVersion: gatewayv1.GroupVersion.String(), APIResources: []metav1.APIResource{
			{Name: "gatewayclasses"}, {Name: "gateways", Namespaced: true}, {Name: "httproutes", Namespaced: true},
			{Name: "grpcroutes", Namespaced: true}, {Name: "tlsroutes", Namespaced: true}, {Name: "referencegrants", Namespaced: true}}},
		{GroupVersion: tlbv1alpha1.SchemeGroupVersion.String(), APIResources: []metav1.APIResource{
			{Name: tlbv1alpha1.ResourceGatewayClassConfigs}, {Name: tlbv1alpha1.ResourceTrafficPolicies, Namespaced: true}}},
	}
}

// publishes runs src and collects what it publishes.
type publishes struct {
	mu  sync.Mutex
	got []model.Config
}

func (p *publishes) publish(_ context.Context, c model.Config) []model.Problem {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, c)
	return nil
}

// waitFor waits until the last model published satisfies ok.
func (p *publishes) waitFor(t *testing.T, what string, ok func(model.Config) bool) model.Config {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p.mu.Lock()
		n := len(p.got)
		var last model.Config
		if n > 0 {
			last = p.got[n-1]
		}
		p.mu.Unlock()
		if n > 0 && ok(last) {
			return last
		}
	}
	t.Fatalf("no published model %s", what)
	return model.Config{}
}

func names[T any](xs []T, name func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, name(x))
	}
	slices.Sort(out)
	return out
}

// TestSourceReadsGatewayAPI: with the CRDs served, the Source hands Build
// the Gateway API objects (the tlb.io class configs decoded, the VIPs read
// from the VIP Services), merges the result for its own group alone into
// the annotated Services' model, and rebuilds when a route is created.
func TestSourceReadsGatewayAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewClientset(
		service("web", "shop", map[string]string{api.AnnotationL7: "true"}, "", port("http", 80)),
		slice("web", "shop", "shop-a", "http", 8080, ep{addr: "198.18.0.10"}),
		vipService("web", "mine", "203.0.113.50"),
		vipService("web", "theirs", "203.0.113.51"),
	)
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = gatewayAPIResources()
	gw := gwfake.NewSimpleClientset(&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "tlb"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName}})
	// Gateways are created through the client: given to the constructor,
	// the tracker files them under v1beta1, where Gateway is the same Go
	// type. NewSimpleClientset: NewClientset's field manager knows no
	// Gateway API type ("no matches for ... gateways").
	for _, g := range []*gatewayv1.Gateway{gateway("web", "mine", "tlb"), gateway("web", "theirs", "tlb-other")} {
		if _, err := gw.GatewayV1().Gateways(g.Namespace).Create(ctx, g, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gccResource: "GatewayClassConfigList", tpResource: "TrafficPolicyList"},
		classConfig("tlb", "default"), classConfig("tlb-other", "other"))
	fb := &fakeBuild{}
	src, err := NewSource(client, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Group: "default", Now: time.Now,
		GatewayAPI: &GatewayAPI{Client: gw, Dynamic: dyn, Build: fb.build}})
	if err != nil {
		t.Fatal(err)
	}
	var p publishes
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, p.publish) }()

	first := p.waitFor(t, "with the Gateway of group default", func(c model.Config) bool { return len(c.Gateways) > 0 })
	if got := names(first.Gateways, func(g model.Gateway) string { return g.Name }); !slices.Equal(got, []string{"web.mine"}) {
		t.Errorf("gateways %v, want web.mine alone (web.theirs is of group other)", got)
	}
	if got := names(first.Services, func(s model.Service) string { return s.Name }); !slices.Equal(got, []string{"web.shop"}) {
		t.Errorf("services %v, want the annotated web.shop", got)
	}
	if first.Gateways[0].Listeners[0].VIP != netip.MustParseAddr("203.0.113.50") {
		t.Errorf("VIP %v, want the VIP Service's 203.0.113.50", first.Gateways[0].Listeners[0].VIP)
	}
	_, in := fb.seen()
	if len(in.Classes) != 1 || len(in.ClassConfigs) != 2 || len(in.Gateways) != 2 || len(in.Services) != 3 || len(in.EndpointSlices) != 1 || len(in.Namespaces) != 0 {
		t.Errorf("Build got %d classes, %d class configs, %d gateways, %d services, %d slices, %d namespaces",
			len(in.Classes), len(in.ClassConfigs), len(in.Gateways), len(in.Services), len(in.EndpointSlices), len(in.Namespaces))
	}

	route := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "r"}}
	if _, err := gw.GatewayV1().HTTPRoutes("web").Create(ctx, route, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	after := p.waitFor(t, "with the HTTPRoute's service", func(c model.Config) bool { return len(c.Services) == 2 })
	if got := names(after.Services, func(s model.Service) string { return s.Name }); !slices.Equal(got, []string{"route.web.r", "web.shop"}) {
		t.Errorf("services after the route: %v", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestSourceWithoutGatewayAPICRDs: when the API server serves no Gateway
// API, the Source asked for it publishes what it did without: Build is
// never called, and Run ends without error.
func TestSourceWithoutGatewayAPICRDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	objs := []runtime.Object{
		service("web", "shop", map[string]string{api.AnnotationL7: "true"}, "", port("http", 80)),
		slice("web", "shop", "shop-a", "http", 8080, ep{addr: "198.18.0.10"}),
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	run := func(ga *GatewayAPI) model.Config {
		t.Helper()
		rctx, rcancel := context.WithCancel(ctx)
		defer rcancel()
		src, err := NewSource(fake.NewClientset(objs...), log, Options{Group: "default", Now: time.Now, GatewayAPI: ga})
		if err != nil {
			t.Fatal(err)
		}
		var p publishes
		done := make(chan error, 1)
		go func() { done <- src.Run(rctx, p.publish) }()
		c := p.waitFor(t, "at all", func(model.Config) bool { return true })
		rcancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		return c
	}
	fb := &fakeBuild{}
	gw := gwfake.NewClientset(gateway("web", "mine", "tlb"))
	with := run(&GatewayAPI{Client: gw, Build: fb.build})
	without := run(nil)
	if calls, _ := fb.seen(); calls != 0 {
		t.Errorf("Build called %d times without the CRDs", calls)
	}
	if got := names(with.Services, func(s model.Service) string { return s.Name }); !slices.Equal(got, []string{"web.shop"}) || len(with.Gateways) != len(without.Gateways) || len(with.Services) != len(without.Services) {
		t.Errorf("model without CRDs: %d gateways, services %v; without the option: %d gateways, %d services", len(with.Gateways), got, len(without.Gateways), len(without.Services))
	}
}

// TestMergeGroup: only the group's gateways and services, and only the
// certificates those gateways declare, are merged: another group's
// certificate of the same name is not.
func TestMergeGroup(t *testing.T) {
	from := model.Config{
		Gateways: []model.Gateway{
			{Name: "a", Group: "g", Listeners: []model.Listener{{Name: "l", TLS: []model.SNICertificate{{Certificate: "ca"}}}}},
			{Name: "b", Group: "h", Listeners: []model.Listener{{Name: "l", TLS: []model.SNICertificate{{Certificate: "cb"}}}}},
		},
		Services: []model.Service{{Name: "s", Group: "g"}, {Name: "t", Group: "h"}},
		Certificates: []model.Certificate{{Name: "ca", Gateway: model.GatewayID{Name: "a"}}, {Name: "cb", Gateway: model.GatewayID{Name: "b"}},
			{Name: "ca", Gateway: model.GatewayID{Name: "b"}}},
	}
	cfg := model.Config{Services: []model.Service{{Name: "annotated", Group: "g"}}}
	mergeGroup(&cfg, from, "g")
	got := [][]string{
		names(cfg.Gateways, func(g model.Gateway) string { return g.Name }),
		names(cfg.Services, func(s model.Service) string { return s.Name }),
		names(cfg.Certificates, func(c model.Certificate) string { return c.Name }),
	}
	want := [][]string{{"a"}, {"annotated", "s"}, {"ca"}}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("merged %v, want %v", got, want)
			break
		}
	}
}
