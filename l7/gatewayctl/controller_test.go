package gatewayctl

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/internal/poll"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// TestControllerOnFakes runs the controller on fake clients (a logic
// test; integration/k8sgateway proves it against the real API server
// and IPAM): the Gateway's VIP Service is created; once it has a VIP
// (set here as the IPAM would), the Gateway's status.addresses carry it;
// a resync of the unchanged objects writes nothing; deleting the Gateway
// deletes its VIP Service.
// fakeController runs a Controller on fake clients holding the class
// "tlb" and the Gateway a/web, until the test ends.
func fakeController(t *testing.T) (*Controller, *fake.Clientset, *gwfake.Clientset, context.Context) {
	t.Helper()
	cfg, err := runtime.DefaultUnstructuredConverter.ToUnstructured(testConfigs[0])
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: cfg}
	u.SetAPIVersion("tlb.io/v1alpha1")
	u.SetKind("GatewayClassConfig")
	dc := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		ClassConfigResource: "GatewayClassConfigList", TrafficPolicyResource: "TrafficPolicyList",
	}, u)
	kc := fake.NewClientset()
	gc := gwfake.NewSimpleClientset(class("tlb", gatewayapi.ControllerName, "prod"))
	// NewSimpleClientset: NewClientset's tracker knows no Gateway API
	// resources. The Gateway is created through the client: the tracker
	// guesses the resource of objects handed to the constructor from
	// their kind ("gatewaies").
	if _, err := gc.GatewayV1().Gateways("a").Create(context.Background(), gateway("a", "web", "tlb"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	c, err := New(Options{Kube: kc, Gateway: gc, Dynamic: dc, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: reg, Identity: "test", AddressRecheck: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	return c, kc, gc, ctx
}

func TestControllerOnFakes(t *testing.T) {
	c, kc, gc, ctx := fakeController(t)
	var err error
	var vip *corev1.Service
	poll.Explained(t, 10*time.Second, "the VIP Service of a/web exists", func() (bool, string) {
		vip, err = kc.CoreV1().Services("a").Get(ctx, "web-vip", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	if vip.Annotations[api.AnnotationPool] != "public" || vip.Labels[api.LabelOwningGateway] != "a.web" {
		t.Fatalf("VIP Service = %+v", vip.ObjectMeta)
	}
	vip.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.9"}}
	if _, err := kc.CoreV1().Services("a").UpdateStatus(ctx, vip, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Explained(t, 10*time.Second, "a/web has address 203.0.113.9", func() (bool, string) {
		gw, err := gc.GatewayV1().Gateways("a").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(gw.Status.Addresses) == 1 && gw.Status.Addresses[0].Value == "203.0.113.9", fmt.Sprintf("status %+v", gw.Status)
	})

	writes := c.StatusWrites()
	syncs := counterValue(t, c.metrics.syncs.WithLabelValues("ok"))
	c.queue.Add(syncKey)
	poll.Until(t, 10*time.Second, "the resync is done", func() bool { return counterValue(t, c.metrics.syncs.WithLabelValues("ok")) > syncs })
	if got := c.StatusWrites(); got != writes {
		t.Fatalf("resync of unchanged objects wrote %d statuses", got-writes)
	}

	if err := gc.GatewayV1().Gateways("a").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll.Explained(t, 10*time.Second, "the VIP Service of a/web is deleted", func() (bool, string) {
		_, err := kc.CoreV1().Services("a").Get(ctx, "web-vip", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
