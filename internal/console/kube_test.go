package console

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/tlbproject/tlb/api/v1alpha1"
)

const keyMaterial = "MC4CAQAwBQYDK2VwBCIEIKEY-MATERIAL-NEVER-SHOWN"

func unstructuredOf(t *testing.T, kind, name string, obj any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(v1alpha1.SchemeGroupVersion.String())
	u.SetKind(kind)
	u.SetName(name)
	return u
}

// kubeFixture is a fake API server with a pool, a cluster, two TLB
// Services and one other, a TLS Secret, a warning and a normal Event and
// the ipam Lease; gatewayCRD says whether Gateways are served.
func kubeFixture(t *testing.T, gatewayCRD bool) (KubeSource, *kubefake.Clientset) {
	t.Helper()
	class := "tlb.io/l4"
	lastApplied := `{"kind":"Secret","data":{"tls.key":"` + keyMaterial + `"}}`
	kc := kubefake.NewClientset(
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: map[string]string{
			"tlb.io/environment": "production", "tlb.io/assigned-pool": "prod-a", "tlb.io/assigned-l4-cluster": "tlb-1",
			"tlb.io/l7": "true", "tlb.io/l7-hosts": "shop.example.com, www.shop.example.com", "tlb.io/l7-tls-secret": "shop-tls",
			"kubectl.kubernetes.io/last-applied-configuration": lastApplied,
		}},
			Spec:   corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class, Ports: []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.10"}}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "internal"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shop-tls"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.key": []byte(keyMaterial), "tls.crt": []byte("CERT")}},
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "e1"}, Type: corev1.EventTypeWarning, Reason: "InvalidAnnotation",
			Message: "bad", InvolvedObject: corev1.ObjectReference{Kind: "Service", Namespace: "shop", Name: "bad"}, Count: 2},
	)
	// The fake clientset ignores field selectors: filter as the API server does.
	kc.PrependReactor("list", "events", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, &corev1.EventList{Items: []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "InvalidAnnotation", Message: "bad",
			Source:         corev1.EventSource{Component: "tlb-ipam"},
			InvolvedObject: corev1.ObjectReference{Kind: "Service", Namespace: "shop", Name: "bad"}, Count: 2}}}, nil
	})
	scheme := runtime.NewScheme()
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		v1alpha1.VIPPoolResource: "VIPPoolList", v1alpha1.L4ClusterResource: "L4ClusterList", GatewayResource: "GatewayList",
	},
		unstructuredOf(t, "VIPPool", "prod-a", &v1alpha1.VIPPool{Spec: v1alpha1.VIPPoolSpec{CIDRs: []string{"203.0.113.0/28"}, L4Cluster: "tlb-1"},
			Status: v1alpha1.VIPPoolStatus{Used: 1, Free: 13}}),
		unstructuredOf(t, "L4Cluster", "tlb-1", &v1alpha1.L4Cluster{Spec: v1alpha1.L4ClusterSpec{Environment: "production", Capacity: 1000},
			Status: v1alpha1.L4ClusterStatus{Used: 1, Free: 13, Pools: 1}}),
	)
	if !gatewayCRD {
		dc.PrependReactor("list", "gateways", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewNotFound(GatewayResource.GroupResource(), "")
		})
	}
	return KubeSource{Kube: kc, Dynamic: dc, LeaseNamespace: "tlb-system"}, kc
}

func TestKubeSourceReads(t *testing.T) {
	src, _ := kubeFixture(t, false)
	st, err := src.ReadAPI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pools) != 1 || st.Pools[0].Used != 1 || st.Pools[0].L4Cluster != "tlb-1" {
		t.Errorf("pools %+v", st.Pools)
	}
	if len(st.Clusters) != 1 || st.Clusters[0].Environment != "production" {
		t.Errorf("clusters %+v", st.Clusters)
	}
	if len(st.Services) != 1 {
		t.Fatalf("services %+v: want only the TLB Service", st.Services)
	}
	s := st.Services[0]
	if s.Pool != "prod-a" || s.Requested != "environment=production" || s.VIPs[0] != "203.0.113.10" || s.L7 == nil ||
		strings.Join(s.L7.Hosts, ",") != "shop.example.com,www.shop.example.com" || s.L7.TLSSecret != "shop-tls" || s.L7.Group != "default" {
		t.Errorf("service %+v L7 %+v", s, s.L7)
	}
	if st.GatewaysInstalled {
		t.Error("Gateways reported installed without the CRD")
	}
	if len(st.Events) != 1 || st.Events[0].Reason != "InvalidAnnotation" {
		t.Errorf("events %+v", st.Events)
	}
	src, _ = kubeFixture(t, true)
	if st, err = src.ReadAPI(context.Background()); err != nil || !st.GatewaysInstalled {
		t.Errorf("with the CRD: installed %v err %v", st.GatewaysInstalled, err)
	}
}

// TestNoSecretData: the console never asks for a Secret, and key material
// that reaches a Service's other annotations never reaches the page.
func TestNoSecretData(t *testing.T) {
	src, kc := kubeFixture(t, false)
	for _, path := range []string{"/", "/vip/203.0.113.10"} {
		code, page := get(t, src, fakeComponents(testComponents()), path)
		if code != 200 {
			t.Fatalf("GET %s: %d", path, code)
		}
		if strings.Contains(page, keyMaterial) || strings.Contains(page, "last-applied") {
			t.Errorf("GET %s shows secret data", path)
		}
		if !strings.Contains(page, "shop/web") {
			t.Errorf("GET %s: the Service is missing (the check above proves nothing)", path)
		}
	}
	for _, a := range kc.Actions() {
		if a.GetResource().Resource == "secrets" {
			t.Errorf("the console %s secrets", a.GetVerb())
		}
	}
}
