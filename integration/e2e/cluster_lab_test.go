//go:build lab

package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/internal/kube/kubetest"
)

// cluster is the Kubernetes side of the test: the API server with the
// CRDs and the RBAC of deploy/, and a kubeconfig per ServiceAccount.
type cluster struct {
	server *apiserver.Server
	kc     kubernetes.Interface
	// hostport is where the API server listens (loopback).
	hostport string
	// kubeconfig of each role's ServiceAccount: ipam, director, netd.
	ipamKC, directorKC, netdKC string
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..")
}

// startCluster starts etcd and kube-apiserver in the VM, installs the
// CRDs, the namespace and each role's ServiceAccount and RBAC exactly as
// deploy/ has them, and issues a token per ServiceAccount.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	begin := time.Now()
	root := repoRoot(t)
	s, err := apiserver.StartWithCRDs(8*time.Minute, filepath.Join(root, "deploy", "crds"))
	if err != nil {
		t.Fatalf("start kube-apiserver and etcd in the VM with the CRDs of deploy/crds: %v", err)
	}
	t.Cleanup(s.Stop)
	t.Logf("kube-apiserver ready in the VM after %s", time.Since(begin).Round(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var objs []*unstructured.Unstructured
	for _, f := range []string{"base/namespace.yaml", "ipam/rbac.yaml", "director/rbac.yaml", "netd/rbac.yaml"} {
		o, err := apiserver.ReadManifests(filepath.Join(root, "deploy", f))
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}
	if err := s.CreateAll(ctx, objs); err != nil {
		t.Fatalf("apply the RBAC of deploy/: %v", err)
	}
	c := &cluster{server: s}
	u, err := url.Parse(s.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	c.hostport = u.Host
	if c.kc, err = kubernetes.NewForConfig(s.Config); err != nil {
		t.Fatal(err)
	}
	// Each role's token, and the first thing each needs, to know the
	// API server's RBAC caches have the new bindings before the
	// controllers start.
	for _, r := range []struct {
		sa   string
		dst  *string
		need authorizationv1.ResourceAttributes
	}{
		{"tlb-ipam", &c.ipamKC, authorizationv1.ResourceAttributes{Namespace: "tlb-system", Verb: "create", Group: "coordination.k8s.io", Resource: "leases"}},
		{"tlb-director", &c.directorKC, authorizationv1.ResourceAttributes{Verb: "list", Resource: "services"}},
		{"tlb-netd", &c.netdKC, authorizationv1.ResourceAttributes{Verb: "list", Resource: "nodes"}},
	} {
		if *r.dst, err = s.ServiceAccountKubeconfig(ctx, "tlb-system", r.sa); err != nil {
			t.Fatal(err)
		}
		waitAllowed(t, *r.dst, r.sa, r.need)
	}
	return c
}

// waitAllowed waits until the holder of kubeconfig may do what need says
// (a SelfSubjectAccessReview), at most two minutes.
func waitAllowed(t *testing.T, kubeconfig, who string, need authorizationv1.ResourceAttributes) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	var last string
	for time.Since(begin) < 2*time.Minute {
		r, err := kc.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(),
			&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &need}}, metav1.CreateOptions{})
		if err == nil && r.Status.Allowed {
			t.Logf("%s may %s %s after %s", who, need.Verb, need.Resource, time.Since(begin).Round(time.Millisecond))
			return
		}
		last = fmt.Sprintf("err %v, status %+v", err, r)
		time.Sleep(time.Second)
	}
	t.Fatalf("%s may not %s %s after 2m (RBAC of deploy/ not in force): %s", who, need.Verb, need.Resource, last)
}

// createPool creates an L4Cluster of environment env with one VIPPool.
func (c *cluster) createPool(t *testing.T, l4cluster, env, pool, cidr string) {
	t.Helper()
	cl := &v1alpha1.L4Cluster{ObjectMeta: metav1.ObjectMeta{Name: l4cluster}, Spec: v1alpha1.L4ClusterSpec{Environment: env}}
	c.create(t, cl)
	c.create(t, &v1alpha1.VIPPool{ObjectMeta: metav1.ObjectMeta{Name: pool},
		Spec: v1alpha1.VIPPoolSpec{L4Cluster: l4cluster, CIDRs: []string{cidr}}})
}

func (c *cluster) create(t *testing.T, obj any) {
	t.Helper()
	u, err := kubetest.Unstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.server.CreateAll(context.Background(), []*unstructured.Unstructured{u}); err != nil {
		t.Fatal(err)
	}
}

// createGatewayNode registers a gateway node as a kubelet would: the
// gateway label, one InternalIP, Ready.
func (c *cluster) createGatewayNode(t *testing.T, name, ip string) {
	t.Helper()
	ctx := context.Background()
	n, err := c.kc.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: map[string]string{api.LabelGateway: "true"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	c.setReady(t, n, true)
}

// setNodeReady sets the Ready condition of a node.
func (c *cluster) setNodeReady(t *testing.T, name string, ready bool) {
	t.Helper()
	n, err := c.kc.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.setReady(t, n, ready)
}

func (c *cluster) setReady(t *testing.T, n *corev1.Node, ready bool) {
	t.Helper()
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st, Reason: "E2E", LastHeartbeatTime: now, LastTransitionTime: now}}
	if _, err := c.kc.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set node %s ready=%v: %v", n.Name, ready, err)
	}
}

// vipOf returns the VIP in the status of Service ns/name, "" while none.
func (c *cluster) vipOf(t *testing.T, ns, name string) string {
	t.Helper()
	svc, err := c.kc.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || len(svc.Status.LoadBalancer.Ingress) == 0 {
		return ""
	}
	return svc.Status.LoadBalancer.Ingress[0].IP
}

func (c *cluster) mustCreateNamespace(t *testing.T, ns string) {
	t.Helper()
	if _, err := c.kc.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// createService creates a LoadBalancer Service of class tlb.io/l4 with
// one TCP port 80 in the environment of the test's pool.
func (c *cluster) createService(t *testing.T, ns, name string, annotations map[string]string) {
	t.Helper()
	ann := map[string]string{api.AnnotationEnvironment: env}
	maps.Copy(ann, annotations)
	class := api.LoadBalancerClass
	_, err := c.kc.CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class,
			AllocateLoadBalancerNodePorts: new(false), Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Service %s/%s: %v", ns, name, err)
	}
}

// waitVIP waits until the ipam controller writes a VIP from the pool into
// the status of Service ns/name, and returns it.
func (c *cluster) waitVIP(t *testing.T, ns, name string, created time.Time) string {
	t.Helper()
	var vip string
	waitFor(t, 3*time.Minute, "the ipam controller writes a VIP into the status of "+ns+"/"+name, func() bool {
		vip = c.vipOf(t, ns, name)
		return vip != ""
	})
	if !prefixContains(t, pool, vip) {
		t.Fatalf("VIP %s of %s/%s is not from pool %s", vip, ns, name, pool)
	}
	t.Logf("%s/%s: VIP %s in status after %s", ns, name, vip, since(created))
	return vip
}
