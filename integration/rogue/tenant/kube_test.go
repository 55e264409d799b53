//go:build k8s

package tenant

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tlbproject/tlb/internal/poll"
)

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func admin(t *testing.T) kubernetes.Interface {
	t.Helper()
	kc, err := kubernetes.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

func createNamespaces(t *testing.T, names ...string) {
	t.Helper()
	kc := admin(t)
	for _, n := range names {
		_, err := kc.CoreV1().Namespaces().Create(ctxFor(t, 30*time.Second), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// tenant is someone who may write Services, HTTPRoutes and
// TrafficPolicies in one namespace, and nothing else: a ServiceAccount
// bound to a Role that says so.
type tenant struct {
	ns     string
	config *rest.Config
	kube   kubernetes.Interface
}

func newTenant(t *testing.T, ns string) *tenant {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	kc := admin(t)
	if _, err := kc.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	verbs := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: verbs},
		{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"httproutes"}, Verbs: verbs},
		{APIGroups: []string{"tlb.io"}, Resources: []string{"trafficpolicies"}, Verbs: verbs},
	}}
	if _, err := kc.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "tenant", Namespace: ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "tenant"}}
	if _, err := kc.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	path, err := server.ServiceAccountKubeconfig(ctx, ns, "tenant")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &tenant{ns: ns, config: cfg, kube: tk}
}

// service writes an L7 Service of the tenant: host <name>.example.com,
// one port, the given annotations besides the L7 ones. The test then
// plays the cluster's controllers: the IPAM writes vip into its status,
// the EndpointSlice controller points it at the backend.
func (tn *tenant) service(t *testing.T, s *site, name, vip string, port int, ann map[string]string) {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	all := map[string]string{"tlb.io/l7": "true", "tlb.io/l7-group": group, "tlb.io/l7-hosts": name + ".example.com"}
	for k, v := range ann {
		all[k] = v
	}
	class := "tlb.io/l4"
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: all}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class,
		Ports: []corev1.ServicePort{{Name: "http", Port: int32(port), TargetPort: intstr.FromInt32(int32(s.backend.port()))}},
	}}
	if _, err := tn.kube.CoreV1().Services(tn.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("tenant %s creates Service %s: %v", tn.ns, name, err)
	}
	backendSlice(t, s, tn.ns, name)
	kc := admin(t)
	got, err := kc.CoreV1().Services(tn.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip}}
	if _, err := kc.CoreV1().Services(tn.ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// backendSlice points Service ns/name at the site's backend.
func backendSlice(t *testing.T, s *site, ns, name string) {
	t.Helper()
	port, proto, portName, ready := int32(s.backend.port()), corev1.ProtocolTCP, "http", true
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{s.nodeIP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
	}
	if _, err := admin(t).DiscoveryV1().EndpointSlices(ns).Create(ctxFor(t, time.Minute), es, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitEvent waits for an Event on Service ns/name whose message holds
// every one of want, and returns it: how l7 tells a tenant its Service
// is not served.
func waitEvent(t *testing.T, ns, name string, want ...string) string {
	t.Helper()
	var msg string
	poll.Until(t, 2*time.Minute, fmt.Sprintf("an Event on Service %s/%s saying %q", ns, name, want), func() bool {
		evs, err := admin(t).CoreV1().Events(ns).List(ctxFor(t, 30*time.Second), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false
		}
	next:
		for _, e := range evs.Items {
			for _, w := range want {
				if !strings.Contains(e.Message, w) {
					continue next
				}
			}
			msg = e.Reason + ": " + e.Message
			return true
		}
		return false
	})
	return msg
}

// apply creates the objects of a YAML stream with the given credentials
// (a tenant's, or the admin's for the operator's objects), mapping kinds
// through discovery.
func apply(t *testing.T, cfg *rest.Config, ns string, docs string) {
	t.Helper()
	if err := create(t, cfg, ns, docs); err != nil {
		t.Fatal(err)
	}
}

// create creates the objects of docs in ns as cfg's user, and returns the
// API server's first refusal.
func create(t *testing.T, cfg *rest.Config, ns string, docs string) error {
	t.Helper()
	ctx := ctxFor(t, time.Minute)
	dc, err := discovery.NewDiscoveryClientForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(docs), 4096)
	for {
		var o unstructured.Unstructured
		if err := dec.Decode(&o.Object); err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			t.Fatalf("decode: %v", err)
		}
		if len(o.Object) == 0 {
			continue
		}
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("map %s: %v", gvk, err)
		}
		var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == "namespace" {
			o.SetNamespace(ns)
			r = dyn.Resource(m.Resource).Namespace(ns)
		}
		if _, err := r.Create(ctx, &o, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s %s/%s: %w", gvk.Kind, ns, o.GetName(), err)
		}
	}
}

// sharedGateway is the operator's Gateway in infra, open to routes of
// every namespace, with its VIP Service as the Gateway controller and the
// IPAM leave it (vip in status).
func sharedGateway(t *testing.T, s *site, vip string) {
	t.Helper()
	class := "rogue-" + strconv.Itoa(s.n)
	apply(t, server.Config, s.ns.infra, fmt.Sprintf(`apiVersion: tlb.io/v1alpha1
kind: GatewayClassConfig
metadata: {name: %[1]s}
spec: {gatewayGroup: %[2]s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: %[1]s}
spec:
  controllerName: tlb.io/gateway-controller
  parametersRef: {group: tlb.io, kind: GatewayClassConfig, name: %[1]s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: shared}
spec:
  gatewayClassName: %[1]s
  listeners:
    - {name: http, port: %[3]d, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
`, class, group, gatewayPort))
	ctx := ctxFor(t, time.Minute)
	kc := admin(t)
	dyn, err := dynamic.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := dyn.Resource(gatewayResource).Namespace(s.ns.infra).Get(ctx, "shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes, lbClass := true, "tlb.io/l4"
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shared-vip", Labels: map[string]string{"tlb.io/owning-gateway": "shared"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "gateway.networking.k8s.io/v1", Kind: "Gateway", Name: "shared", UID: gw.GetUID(), Controller: &yes}}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &lbClass,
			Ports: []corev1.ServicePort{{Name: "http", Port: gatewayPort}}}}
	got, err := kc.CoreV1().Services(s.ns.infra).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip}}
	if _, err := kc.CoreV1().Services(s.ns.infra).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var gatewayResource = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
