//go:build k8s

package k8s

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/integration/tlstest"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/internal/leader"
	"github.com/tlbproject/tlb/ipam/controller"
	l7kube "github.com/tlbproject/tlb/l7/kube"
	l7model "github.com/tlbproject/tlb/l7/model"
	netdkube "github.com/tlbproject/tlb/netd/kube"
	netdmodel "github.com/tlbproject/tlb/netd/model"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
	"github.com/tlbproject/tlb/tlb/model"
)

// rbacKinds are the RBAC objects installRBAC takes from a manifest file,
// with their resources; every other kind in the file is left out.
var rbacKinds = map[string]struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	"ServiceAccount":     {schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, true},
	"ClusterRole":        {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, false},
	"ClusterRoleBinding": {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, false},
	"Role":               {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, true},
	"RoleBinding":        {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, true},
}

// installRBAC applies, as the admin, the ServiceAccount and RBAC objects of
// one file under deploy/ (as written in the repository) and removes them
// when the test ends.
func installRBAC(t *testing.T, rel string) {
	t.Helper()
	ctx := context.Background()
	kc, dc := clients(t)
	ensureNamespace(t, kc, "tlb-system")
	objs, err := apiserver.ReadManifests(filepath.Join(repoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	installed := map[string]int{}
	for _, o := range objs {
		k, ok := rbacKinds[o.GetKind()]
		if !ok {
			continue
		}
		ri := dc.Resource(k.gvr)
		body, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		force := true
		opts := metav1.PatchOptions{FieldManager: "tlb-rbac-test", Force: &force}
		name, kind, ns := o.GetName(), o.GetKind(), o.GetNamespace()
		if k.namespaced {
			_, err = ri.Namespace(ns).Patch(ctx, name, types.ApplyPatchType, body, opts)
		} else {
			_, err = ri.Patch(ctx, name, types.ApplyPatchType, body, opts)
		}
		if err != nil {
			t.Fatalf("%s: apply %s %s: %v", rel, kind, name, err)
		}
		installed[kind]++
		t.Cleanup(func() {
			var err error
			if k.namespaced {
				err = ri.Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
			} else {
				err = ri.Delete(context.Background(), name, metav1.DeleteOptions{})
			}
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("delete %s %s: %v", kind, name, err)
			}
		})
	}
	if installed["ServiceAccount"] == 0 || installed["ClusterRole"] == 0 || installed["ClusterRoleBinding"] == 0 {
		t.Fatalf("%s: want a ServiceAccount and a ClusterRole with its binding, found %v", rel, installed)
	}
}

// serviceAccountKubeconfig writes a kubeconfig that reaches the test's API
// server as the admin impersonating ServiceAccount tlb-system/sa with its
// groups (kubectl's --as/--as-group), so the API server authorizes every
// request against that ServiceAccount's RBAC only. The binaries load it
// as they load any kubeconfig.
func serviceAccountKubeconfig(t *testing.T, sa string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: server.Config.Host, CertificateAuthority: server.Config.CAFile}
	kc.AuthInfos[sa] = &clientcmdapi.AuthInfo{
		Token:             server.Config.BearerToken,
		Impersonate:       "system:serviceaccount:tlb-system:" + sa,
		ImpersonateGroups: []string{"system:serviceaccounts", "system:serviceaccounts:tlb-system", "system:authenticated"},
	}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: sa}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), sa+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// serviceAccountClients returns the clients the binaries build
// (tlb/kube.NewClients) from serviceAccountKubeconfig, once the API
// server's RBAC cache has the role: a ServiceAccount that may list
// Services can. Until then a Forbidden would prove nothing.
func serviceAccountClients(t *testing.T, sa string) sharedkube.Clients {
	t.Helper()
	c, err := sharedkube.NewClients(serviceAccountKubeconfig(t, sa), false, "tlb-rbac-test/"+sa)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, sa+" may list Services (RBAC in effect)", func() (bool, string) {
		_, err := c.Kube.CoreV1().Services("").List(context.Background(), metav1.ListOptions{Limit: 1})
		return err == nil, fmt.Sprint(err)
	})
	return c
}

// forbidden is one request a role must not be allowed to make.
type forbidden struct {
	name string
	call func(ctx context.Context, c sharedkube.Clients) error
}

// assertForbidden makes each request as the ServiceAccount and fails
// unless the API server answers Forbidden (403).
func assertForbidden(t *testing.T, sa string, c sharedkube.Clients, checks []forbidden) {
	t.Helper()
	for _, f := range checks {
		t.Run("forbidden: "+f.name, func(t *testing.T) {
			err := f.call(context.Background(), c)
			if !apierrors.IsForbidden(err) {
				t.Errorf("%s: %s: err = %v, want Forbidden", sa, f.name, err)
			}
		})
	}
}

// readOnlyServiceChecks are the requests no read-only role (director,
// netd, l7) may make: writes to the existing Service ns/name (read through
// kc, the admin) and creating a Secret.
func readOnlyServiceChecks(kc kubernetes.Interface, ns, name string) []forbidden {
	get := func(ctx context.Context) (*corev1.Service, error) {
		return kc.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return []forbidden{
		{"update a Service", func(ctx context.Context, c sharedkube.Clients) error {
			s, err := get(ctx)
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			s.Annotations["rbac-test"] = "x"
			_, err = c.Kube.CoreV1().Services(ns).Update(ctx, s, metav1.UpdateOptions{})
			return err
		}},
		{"update services/status", func(ctx context.Context, c sharedkube.Clients) error {
			s, err := get(ctx)
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.99"}}
			_, err = c.Kube.CoreV1().Services(ns).UpdateStatus(ctx, s, metav1.UpdateOptions{})
			return err
		}},
		{"delete a Service", func(ctx context.Context, c sharedkube.Clients) error {
			return c.Kube.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		{"create a Secret", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rbac-test"}}, metav1.CreateOptions{})
			return err
		}},
	}
}

// agentSetup is what the director and netd sources read for one L4
// cluster: the cluster and its pool, one Ready gateway node of the
// cluster's gateway group, and one Service the ipam controller has (as
// far as they can tell) given a VIP. Everything is named after the test.
type agentSetup struct {
	cluster, node, ns, service string
	vip, nodeIP                netip.Addr
	pool                       netip.Prefix
}

// createAgentSetup creates s's objects as the admin and deletes them when
// the test ends.
func createAgentSetup(t *testing.T, s agentSetup) {
	t.Helper()
	ctx := context.Background()
	kc, dc := clients(t)
	group := map[string]string{api.LabelGatewayGroup: s.cluster}
	createObject(t, dc, v1alpha1.L4ClusterResource, &v1alpha1.L4Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "L4Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: s.cluster, Labels: group},
		Spec:       v1alpha1.L4ClusterSpec{Environment: s.cluster},
	})
	createObject(t, dc, v1alpha1.VIPPoolResource, &v1alpha1.VIPPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: s.cluster + "-pool"},
		Spec:       v1alpha1.VIPPoolSpec{CIDRs: []string{s.pool.String()}, L4Cluster: s.cluster},
	})
	t.Cleanup(func() {
		for _, gvr := range []schema.GroupVersionResource{v1alpha1.VIPPoolResource, v1alpha1.L4ClusterResource} {
			name := s.cluster
			if gvr == v1alpha1.VIPPoolResource {
				name += "-pool"
			}
			if err := dc.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete %s %s: %v", gvr.Resource, name, err)
			}
		}
	})

	labels := map[string]string{api.LabelGateway: "true", api.LabelGatewayGroup: s.cluster}
	n, err := kc.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.node, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Node %s: %v", s.node, err)
	}
	t.Cleanup(func() {
		if err := kc.CoreV1().Nodes().Delete(context.Background(), s.node, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete Node %s: %v", s.node, err)
		}
	})
	now := metav1.Now()
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: s.nodeIP.String()}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "Test", LastHeartbeatTime: now, LastTransitionTime: now}}
	if _, err := kc.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set the status of Node %s: %v", s.node, err)
	}

	ensureNamespace(t, kc, s.ns)
	svc := lbService(s.ns, s.service, map[string]string{api.AnnotationAssignedL4Cluster: s.cluster})
	out, err := kc.CoreV1().Services(s.ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Service %s/%s: %v", s.ns, s.service, err)
	}
	deleteServicesAtCleanup(t, kc, s.ns)
	out.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: s.vip.String()}}
	if _, err := kc.CoreV1().Services(s.ns).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write the VIP of Service %s/%s: %v", s.ns, s.service, err)
	}
}

// latest keeps the last model a source emitted or published.
type latest[T any] struct {
	mu sync.Mutex
	m  T
	n  int
}

func (l *latest[T]) set(m T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m, l.n = m, l.n+1
}

func (l *latest[T]) get() (T, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m, l.n
}

// runUntilCleanup runs fn(ctx) on a goroutine until the test ends and
// fails the test if it returned an error other than the end of ctx.
func runUntilCleanup(t *testing.T, what string, fn func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", what, err)
		}
	})
}

func rbacLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// TestRBACDirector: the director's ClusterRole (deploy/director/rbac.yaml)
// is enough for the real director source (tlb/kube) to sync and emit the
// model of its L4 cluster, as ServiceAccount tlb-director, including the
// ready endpoints of an L7 Service's EndpointSlice (list and watch; without
// them the source never syncs); and it grants no write, no Secret, and no
// EndpointSlice by name.
func TestRBACDirector(t *testing.T) {
	installRBAC(t, "deploy/director/rbac.yaml")
	s := agentSetup{cluster: "rbac-dir", node: "rbac-dir-gw", ns: "rbac-dir", service: "web",
		vip: netip.MustParseAddr("203.0.113.225"), nodeIP: netip.MustParseAddr("198.18.40.2"), pool: netip.MustParsePrefix("203.0.113.224/28")}
	createAgentSetup(t, s)
	l7VIP := netip.MustParseAddr("203.0.113.226")
	createL7ServiceWithEndpoint(t, s, "shop", l7VIP)
	c := serviceAccountClients(t, "tlb-director")

	src, err := tlbkube.NewSource(c.Kube, c.Dynamic, s.cluster, rbacLog())
	if err != nil {
		t.Fatal(err)
	}
	rec := &latest[model.Desired]{}
	runUntilCleanup(t, "director source", func(ctx context.Context) error { return src.Run(ctx, rec.set) })
	wantKeys := []model.Key{{VIP: s.vip, Protocol: model.TCP, Port: 80}, {VIP: l7VIP, Protocol: model.TCP, Port: 80}}
	wantRS := []model.RealServer{{Addr: s.nodeIP, Weight: model.DefaultWeight()}}
	wantL7 := []model.L7Service{{VIP: l7VIP, Name: s.ns + "/shop", ReadyBackends: 1}}
	eventually(t, 30*time.Second, "the director model of "+s.cluster, func() (bool, string) {
		d, n := rec.get()
		if n == 0 {
			return false, "nothing emitted"
		}
		var keys []model.Key
		ok := len(d.Services) == 2 && slices.Contains(d.VIPRanges, s.pool) && reflect.DeepEqual(d.L7, wantL7)
		for _, svc := range d.Services {
			keys = append(keys, svc.Key())
			ok = ok && reflect.DeepEqual(svc.RealServers, wantRS)
		}
		ok = ok && slices.Equal(keys, wantKeys)
		return ok, fmt.Sprintf("services %+v ranges %v L7 %+v; want %v to %v in %v, L7 %+v", d.Services, d.VIPRanges, d.L7, wantKeys, wantRS, s.pool, wantL7)
	})

	kc, dc := clients(t)
	checks := append(readOnlyServiceChecks(kc, s.ns, s.service), directorEndpointSliceChecks(kc, s.ns)...)
	for _, f := range agentChecks(kc, dc, s) {
		if f.name != "list EndpointSlices" { // the director's role lists them; netd's does not
			checks = append(checks, f)
		}
	}
	assertForbidden(t, "tlb-director", c, checks)
}

// createL7ServiceWithEndpoint creates, as the admin, an L7 Service (tlb.io/l7
// "true") of s's cluster with vip in its status, and its EndpointSlice
// with one ready endpoint, named slice "<name>-1".
func createL7ServiceWithEndpoint(t *testing.T, s agentSetup, name string, vip netip.Addr) {
	t.Helper()
	ctx := context.Background()
	kc, _ := clients(t)
	svc := lbService(s.ns, name, map[string]string{api.AnnotationAssignedL4Cluster: s.cluster, api.AnnotationL7: "true"})
	out, err := kc.CoreV1().Services(s.ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Service %s/%s: %v", s.ns, name, err)
	}
	out.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip.String()}}
	if _, err := kc.CoreV1().Services(s.ns).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write the VIP of Service %s/%s: %v", s.ns, name, err)
	}
	ready := true
	if _, err := kc.DiscoveryV1().EndpointSlices(s.ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.7"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create EndpointSlice %s/%s-1: %v", s.ns, name, err)
	}
	t.Cleanup(func() {
		if err := kc.DiscoveryV1().EndpointSlices(s.ns).Delete(context.Background(), name+"-1", metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete EndpointSlice %s/%s-1: %v", s.ns, name, err)
		}
	})
}

// directorEndpointSliceChecks: the director lists and watches
// EndpointSlices, nothing more (slice "shop-1" of ns, read by kc, the admin).
func directorEndpointSliceChecks(kc kubernetes.Interface, ns string) []forbidden {
	return []forbidden{
		{"get an EndpointSlice", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.DiscoveryV1().EndpointSlices(ns).Get(ctx, "shop-1", metav1.GetOptions{})
			return err
		}},
		{"update an EndpointSlice", func(ctx context.Context, c sharedkube.Clients) error {
			s, err := kc.DiscoveryV1().EndpointSlices(ns).Get(ctx, "shop-1", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			_, err = c.Kube.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, metav1.UpdateOptions{})
			return err
		}},
		{"delete an EndpointSlice", func(ctx context.Context, c sharedkube.Clients) error {
			return c.Kube.DiscoveryV1().EndpointSlices(ns).Delete(ctx, "shop-1", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
	}
}

// TestRBACNetd: netd's ClusterRole (deploy/netd/rbac.yaml) is enough for
// the real netd source (netd/kube) to sync and emit the VIPs of its
// gateway node, as ServiceAccount tlb-netd; and it grants no write and no
// Secret.
func TestRBACNetd(t *testing.T) {
	installRBAC(t, "deploy/netd/rbac.yaml")
	s := agentSetup{cluster: "rbac-netd", node: "rbac-netd-gw", ns: "rbac-netd", service: "web",
		vip: netip.MustParseAddr("203.0.113.242"), nodeIP: netip.MustParseAddr("198.18.40.3"), pool: netip.MustParsePrefix("203.0.113.240/28")}
	createAgentSetup(t, s)
	c := serviceAccountClients(t, "tlb-netd")

	src, err := netdkube.NewSource(c.Kube, c.Dynamic, s.node, netdkube.DefaultLocal(), rbacLog())
	if err != nil {
		t.Fatal(err)
	}
	rec := &latest[netdmodel.Gateway]{}
	runUntilCleanup(t, "netd source", func(ctx context.Context) error { return src.Run(ctx, rec.set) })
	eventually(t, 30*time.Second, "the gateway model of node "+s.node, func() (bool, string) {
		g, n := rec.get()
		return n > 0 && reflect.DeepEqual(g.VIPs, []netip.Addr{s.vip}), fmt.Sprintf("%d models, last VIPs %v, want [%s]", n, g.VIPs, s.vip)
	})

	kc, dc := clients(t)
	assertForbidden(t, "tlb-netd", c, append(readOnlyServiceChecks(kc, s.ns, s.service), agentChecks(kc, dc, s)...))
}

// agentChecks are the requests the director and netd must not make
// beyond those of every read-only role.
func agentChecks(kc kubernetes.Interface, dc dynamic.Interface, s agentSetup) []forbidden {
	return []forbidden{
		{"list Secrets", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"create an Event", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Events(s.ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "rbac-test"},
				InvolvedObject: corev1.ObjectReference{Kind: "Service", Namespace: s.ns, Name: s.service}}, metav1.CreateOptions{})
			return err
		}},
		{"update a VIPPool's status", func(ctx context.Context, c sharedkube.Clients) error {
			u, err := dc.Resource(v1alpha1.VIPPoolResource).Get(ctx, s.cluster+"-pool", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			_, err = c.Dynamic.Resource(v1alpha1.VIPPoolResource).UpdateStatus(ctx, u, metav1.UpdateOptions{})
			return err
		}},
		{"update a Node", func(ctx context.Context, c sharedkube.Clients) error {
			n, err := kc.CoreV1().Nodes().Get(ctx, s.node, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			n.Labels["rbac-test"] = "x"
			_, err = c.Kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		}},
		{"list EndpointSlices", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
			return err
		}},
	}
}

// TestRBACL7: the L7 controller's ClusterRole (deploy/envoy/rbac.yaml) is
// enough for the real L7 source (l7/kube), as ServiceAccount tlb-l7, to
// build a model with a Service's EndpointSlice endpoints and its TLS
// Secret's certificate (Secrets listed by type, never got by name), and to
// record the Warning Event for an invalid annotation; and it grants no
// write but Events, no Secret by name, no ConfigMaps, Pods or Nodes.
func TestRBACL7(t *testing.T) {
	installRBAC(t, "deploy/envoy/rbac.yaml")
	ctx := context.Background()
	kc, _ := clients(t)
	ns := "rbac-l7"
	ensureNamespace(t, kc, ns)
	deleteServicesAtCleanup(t, kc, ns)
	chain, key := tlstest.SelfSigned(t, "rbac.example.com")
	if _, err := kc.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: chain, corev1.TLSPrivateKeyKey: key},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := lbService(ns, "web", map[string]string{
		api.AnnotationL7: "true", api.AnnotationL7Hosts: "rbac.example.com", api.AnnotationL7Group: "edge",
		api.AnnotationL7TLSSecret: "web-tls",
	})
	web.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443), Protocol: corev1.ProtocolTCP}}
	out, err := kc.CoreV1().Services(ns).Create(ctx, web, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.210"}}
	if _, err := kc.CoreV1().Services(ns).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	portName, port, tcp, ready := "https", int32(8443), corev1.ProtocolTCP, true
	if _, err := kc.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &tcp}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"198.18.41.10"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := lbService(ns, "bad", map[string]string{api.AnnotationL7: "true", api.AnnotationL7Group: "edge", api.AnnotationL7Timeout: "soon"})
	if _, err := kc.CoreV1().Services(ns).Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The operator lets group edge read TLS Secrets in the namespace it
	// serves, and nowhere else (docs/kubernetes.md, "L7 controller").
	if _, err := kc.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tlb-l7-secrets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tlb-l7-secrets"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "tlb-l7", Namespace: "tlb-system"}},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	c := serviceAccountClients(t, "tlb-l7")
	src, err := l7kube.NewSource(c.Kube, rbacLog(), l7kube.Options{Group: "edge", Namespaces: []string{ns}, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	rec := &latest[l7model.Config]{}
	runUntilCleanup(t, "L7 source", func(ctx context.Context) error {
		return src.Run(ctx, func(_ context.Context, cfg l7model.Config) []l7model.Problem { rec.set(cfg); return nil })
	})
	name := l7kube.ModelName(ns, "web")
	eventually(t, 30*time.Second, "the L7 model has "+name+" with its endpoint and certificate", func() (bool, string) {
		cfg, n := rec.get()
		if n == 0 {
			return false, "nothing published"
		}
		var eps []string
		for _, s := range cfg.Services {
			if s.Name == l7kube.ModelName(ns, "bad") {
				return false, "the Service with the invalid annotation is in the model"
			}
			if s.Name != name {
				continue
			}
			for _, u := range s.Upstreams {
				for _, e := range u.Endpoints {
					eps = append(eps, e.Addr.String())
				}
			}
		}
		hasCert := slices.ContainsFunc(cfg.Certificates, func(c l7model.Certificate) bool {
			return c.Name == name+".web-tls" && string(c.Chain) == string(chain) && c.Key.Equal(l7model.NewPrivateKey(key))
		})
		return reflect.DeepEqual(eps, []string{"198.18.41.10:8443"}) && hasCert,
			fmt.Sprintf("endpoints %v, certificate %v (of %d)", eps, hasCert, len(cfg.Certificates))
	})
	eventually(t, 30*time.Second, "the InvalidL7Annotation Event on "+ns+"/bad", func() (bool, string) {
		evs := eventsFor(t, kc, ns, "bad")
		for _, e := range evs {
			if e.Reason == l7kube.ReasonInvalidAnnotation && e.Source.Component == "tlb-l7" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("events %v", evs)
	})

	assertForbidden(t, "tlb-l7", c, append(readOnlyServiceChecks(kc, ns, "web"),
		forbidden{"list Secrets of a namespace the group does not serve", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"list Secrets of every namespace", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"get a Secret by name", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "web-tls", metav1.GetOptions{})
			return err
		}},
		forbidden{"update a Secret", func(ctx context.Context, c sharedkube.Clients) error {
			s, err := kc.CoreV1().Secrets(ns).Get(ctx, "web-tls", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			_, err = c.Kube.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{})
			return err
		}},
		forbidden{"list ConfigMaps", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"list Pods", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"list Nodes", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"update an EndpointSlice", func(ctx context.Context, c sharedkube.Clients) error {
			s, err := kc.DiscoveryV1().EndpointSlices(ns).Get(ctx, "web-1", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			_, err = c.Kube.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, metav1.UpdateOptions{})
			return err
		}},
		forbidden{"delete an Event", func(ctx context.Context, c sharedkube.Clients) error {
			return c.Kube.CoreV1().Events(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		}},
	))
}

// TestRBACIPAM: the ipam controller's ClusterRole and leader Role
// (deploy/ipam/rbac.yaml) are enough for the real controller, elected
// through Lease tlb-system/tlb-ipam as ServiceAccount tlb-ipam, to give a
// Service its VIP and annotations (one write to services/status), drop the
// finalizer earlier versions added (an upgrade), write the pool's status,
// record an Event for an invalid annotation and release the VIP when the
// Service is deleted; and it grants no Secret, no other Lease, no update
// of a Service itself, no Node write and no change to a pool's spec.
func TestRBACIPAM(t *testing.T) {
	installRBAC(t, "deploy/ipam/rbac.yaml")
	ctx := context.Background()
	kc, dc := clients(t)
	ns, identity := "rbac-ipam", "rbac-ipam-0"
	ensureNamespace(t, kc, ns)
	createPool(t, dc, "rbac-ipam", "rbacipam", 0, "rbac-ipam-pool", "198.51.100.64/28")
	t.Cleanup(func() {
		_ = dc.Resource(v1alpha1.VIPPoolResource).Delete(context.Background(), "rbac-ipam-pool", metav1.DeleteOptions{})
		_ = dc.Resource(v1alpha1.L4ClusterResource).Delete(context.Background(), "rbac-ipam", metav1.DeleteOptions{})
	})
	c := serviceAccountClients(t, "tlb-ipam")

	log := rbacLog()
	ctrl, err := controller.New(controller.Options{Client: c.Kube, Dynamic: c.Dynamic, Log: log, Workers: 2, Identity: identity})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, "ipam controller", func(ctx context.Context) error {
		return leader.Run(ctx, leader.Election{
			Client: c.Kube, Namespace: "tlb-system", Name: "tlb-ipam", Identity: identity,
			LeaseDuration: 6 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: time.Second, Log: log,
		}, func(ctx context.Context) {
			if err := ctrl.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				log.Error("ipam controller", "err", err)
			}
		})
	})
	// Runs before the controller stops: finalizers are released by it.
	deleteServicesAtCleanup(t, kc, ns)

	eventually(t, 60*time.Second, "the controller holds Lease tlb-system/tlb-ipam", func() (bool, string) {
		l, err := kc.CoordinationV1().Leases("tlb-system").Get(ctx, "tlb-ipam", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		h := ""
		if l.Spec.HolderIdentity != nil {
			h = *l.Spec.HolderIdentity
		}
		return h == identity, "holder " + h
	})
	svcs := kc.CoreV1().Services(ns)
	for name, ann := range map[string]map[string]string{
		"web": {api.AnnotationEnvironment: "rbacipam"},
		"bad": {api.AnnotationVIP: "not-an-ip"},
	} {
		if _, err := svcs.Create(ctx, lbService(ns, name, ann), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 60*time.Second, "web gets a VIP from rbac-ipam-pool", func() (bool, string) {
		s, err := svcs.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		vip, ok := vipOf(s)
		return ok && netip.MustParsePrefix("198.51.100.64/28").Contains(vip) &&
				s.Annotations[api.AnnotationAssignedPool] == "rbac-ipam-pool" && !slices.Contains(s.Finalizers, controller.LegacyFinalizer),
			fmt.Sprintf("status %+v annotations %v finalizers %v", s.Status.LoadBalancer, s.Annotations, s.Finalizers)
	})
	// A Service from before the upgrade, with the finalizer of earlier
	// versions: the controller removes it through services/status.
	legacy := lbService(ns, "legacy", map[string]string{api.AnnotationEnvironment: "rbacipam"})
	legacy.Finalizers = []string{controller.LegacyFinalizer}
	if _, err := svcs.Create(ctx, legacy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "legacy gets a VIP and loses the old finalizer", func() (bool, string) {
		s, err := svcs.Get(ctx, "legacy", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, ok := vipOf(s)
		return ok && len(s.Finalizers) == 0, fmt.Sprintf("status %+v finalizers %v", s.Status.LoadBalancer, s.Finalizers)
	})
	eventually(t, 30*time.Second, "rbac-ipam-pool status counts the VIPs", func() (bool, string) {
		st := poolStatus(t, dc, "rbac-ipam-pool")
		return st.Used == 2 && st.Free == 14, fmt.Sprintf("status %+v", st)
	})
	eventually(t, 30*time.Second, "InvalidAnnotation Event on bad", func() (bool, string) {
		evs := eventsFor(t, kc, ns, "bad")
		return hasEvent(evs, controller.ReasonInvalidAnnotation, "tlb.io/vip"), fmt.Sprintf("events %v", evs)
	})
	if err := svcs.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "web gone (finalizer released) and its VIP free", func() (bool, string) {
		_, err := svcs.Get(ctx, "web", metav1.GetOptions{})
		st := poolStatus(t, dc, "rbac-ipam-pool")
		return apierrors.IsNotFound(err) && st.Used == 1, fmt.Sprintf("get: %v; pool %+v", err, st)
	})

	assertForbidden(t, "tlb-ipam", c, []forbidden{
		{"list Secrets", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"get a Secret", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets("tlb-system").Get(ctx, "any", metav1.GetOptions{})
			return err
		}},
		{"get another Lease", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoordinationV1().Leases("tlb-system").Get(ctx, "t3-ipam", metav1.GetOptions{})
			return err
		}},
		{"create a Lease in another namespace", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "tlb-ipam"}},
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		{"delete a Service", func(ctx context.Context, c sharedkube.Clients) error {
			return c.Kube.CoreV1().Services(ns).Delete(ctx, "bad", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		{"update a Service (only its status)", func(ctx context.Context, c sharedkube.Clients) error {
			s, err := kc.CoreV1().Services(ns).Get(ctx, "bad", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			s.Annotations["rbac-test"] = "x"
			_, err = c.Kube.CoreV1().Services(ns).Update(ctx, s, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		{"list Pods", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list Nodes", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err
		}},
		{"update a VIPPool's spec", func(ctx context.Context, c sharedkube.Clients) error {
			u, err := dc.Resource(v1alpha1.VIPPoolResource).Get(ctx, "rbac-ipam-pool", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			_, err = c.Dynamic.Resource(v1alpha1.VIPPoolResource).Update(ctx, u, metav1.UpdateOptions{})
			return err
		}},
	})
}
