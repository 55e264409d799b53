//go:build k8s

package k8sgateway

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/api"
	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	ipamctl "github.com/tlbproject/tlb/ipam/controller"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/gatewayctl"
)

type testClients struct {
	kube kubernetes.Interface
	dyn  dynamic.Interface
	gw   gwclient.Interface
}

func clients(t *testing.T) testClients {
	t.Helper()
	kc, err := kubernetes.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := gwclient.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	return testClients{kube: kc, dyn: dc, gw: gc}
}

func create(t *testing.T, dc dynamic.Interface, gvr schema.GroupVersionResource, obj any) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	if _, err := dc.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", gvr.Resource, u.GetName(), err)
	}
}

// createL4 creates an L4Cluster of env serving gateway group group, and
// its VIPPools (name -> CIDR).
func createL4(t *testing.T, dc dynamic.Interface, cluster, env, group string, pools map[string]string) {
	t.Helper()
	create(t, dc, tlbv1alpha1.L4ClusterResource, &tlbv1alpha1.L4Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: cluster, Labels: map[string]string{api.LabelGatewayGroup: group}},
		Spec:       tlbv1alpha1.L4ClusterSpec{Environment: env},
	})
	for name, cidr := range pools {
		create(t, dc, tlbv1alpha1.VIPPoolResource, &tlbv1alpha1.VIPPool{
			TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       tlbv1alpha1.VIPPoolSpec{CIDRs: []string{cidr}, L4Cluster: cluster},
		})
	}
}

// createClass creates a GatewayClass of ours with a GatewayClassConfig
// of the same name.
func createClass(t *testing.T, c testClients, name string, spec tlbv1alpha1.GatewayClassConfigSpec) {
	t.Helper()
	create(t, c.dyn, gatewayctl.ClassConfigResource, &tlbv1alpha1.GatewayClassConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: tlbv1alpha1.SchemeGroupVersion.String(), Kind: tlbv1alpha1.KindGatewayClassConfig},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       spec,
	})
	_, err := c.gw.GatewayV1().GatewayClasses().Create(context.Background(), &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName, ParametersRef: &gatewayv1.ParametersReference{
			Group: tlbv1alpha1.GroupName, Kind: tlbv1alpha1.KindGatewayClassConfig, Name: name}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create GatewayClass %s: %v", name, err)
	}
}

func ensureNamespace(t *testing.T, kc kubernetes.Interface, ns string) {
	t.Helper()
	if _, err := kc.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Namespace %s: %v", ns, err)
	}
}

// gateway is a Gateway of class with one HTTP listener on port 80 and
// the requested addresses.
func gateway(ns, name, class string, addrs ...string) *gatewayv1.Gateway {
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class), Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
		}},
	}
	ip := gatewayv1.IPAddressType
	for _, a := range addrs {
		gw.Spec.Addresses = append(gw.Spec.Addresses, gatewayv1.GatewaySpecAddress{Type: &ip, Value: a})
	}
	return gw
}

// running controllers stop at the end of the test.
func startControllers(t *testing.T, c testClients, reg prometheus.Registerer) *gatewayctl.Controller {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ipc, err := ipamctl.New(ipamctl.Options{Client: c.kube, Dynamic: c.dyn, Log: log.With("controller", "ipam"), Identity: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	gwc, err := gatewayctl.New(gatewayctl.Options{Kube: c.kube, Gateway: c.gw, Dynamic: c.dyn, Log: log.With("controller", "gateway"), Registry: reg, Identity: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- ipc.Run(ctx) }()
	go func() { done <- gwc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("controller: %v", err)
			}
		}
	})
	return gwc
}
