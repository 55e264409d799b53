//go:build lab

package e2e_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/internal/kube/kubetest"
)

// deployOverlay writes the test's kustomization into a new directory and
// returns it: deploy/ and deploy/envoy as users apply them, but
//   - without Redis and the rate limit service (Deployments, Services and
//     the PodDisruptionBudget of redis.yaml and ratelimit.yaml): no route
//     of the lab's gateway has an interceptor or a global limit, and their
//     pods would only cost the VM's time (their own tests run them:
//     make ratelimit-test, the gateway function tests);
//   - with the DSL ConfigMap tlb-l7-config replaced by the lab's gateway:
//     listeners on gatewayVIP:80 (redirect to HTTPS) and gatewayVIP:443
//     (TLS for gatewayHost, the certificate from the Secret
//     tlb-l7-cert-hello the manifest mounts), one service proxying to
//     backend. deploy/envoy's demo gateway names a VIP the lab does not
//     route.
func deployOverlay(t *testing.T, backend string) string {
	t.Helper()
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, filepath.Join(repoRoot(t), "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	var deletes strings.Builder
	for _, o := range []struct{ api, kind, name string }{
		{"apps/v1", "Deployment", "tlb-redis"},
		{"v1", "Service", "tlb-redis"},
		{"apps/v1", "Deployment", "tlb-ratelimit-edge"},
		{"v1", "Service", "tlb-ratelimit"},
		{"policy/v1", "PodDisruptionBudget", "tlb-ratelimit-edge"},
	} {
		fmt.Fprintf(&deletes, "  - patch: |-\n      $patch: delete\n      apiVersion: %s\n      kind: %s\n      metadata: {name: %s, namespace: tlb-system}\n", o.api, o.kind, o.name)
	}
	files := map[string]string{
		"kustomization.yaml": fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - %[1]s
  - %[1]s/envoy
patches:
%[2]sconfigMapGenerator:
  - name: tlb-l7-config
    namespace: tlb-system
    behavior: replace
    files: [gateway-lab.yaml, shop.yaml]
`, rel, deletes.String()),
		"gateway-lab.yaml": fmt.Sprintf(`kind: gateway/gateway/v1
name: lab
group: edge
listeners:
  - {name: web, vip: %[1]s, port: 80, protocol: HTTP, redirectHTTPS: true}
  - name: secure
    vip: %[1]s
    port: 443
    protocol: HTTPS
    certificates:
      - name: shop
        sni: [%[2]s]
        certFile: /etc/tlb/certs/hello/tls.crt
        keyFile: /etc/tlb/certs/hello/tls.key
`, gatewayVIP, gatewayHost),
		"shop.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: shop
group: edge
hosts: [%s]
listeners: [lab/secure]
upstreams:
  - name: main
    endpoints: [%q]
routes:
  - prefix: /
    target: main
`, gatewayHost, backend),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// createGatewaySecrets creates the Secrets deploy/envoy's pods mount, as
// its comments tell users to: the gateway's certificate (for gatewayHost,
// self-signed; returned as the pool a client verifies it with) and the
// Redis password the l7 container reads.
func createGatewaySecrets(t *testing.T, kc kubernetes.Interface) *x509.CertPool {
	t.Helper()
	chain, key := tlstest.SelfSigned(t, gatewayHost)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(chain) {
		t.Fatal("the test certificate does not parse")
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "tlb-l7-cert-hello"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: chain, corev1.TLSPrivateKeyKey: key}},
		{ObjectMeta: metav1.ObjectMeta{Name: "tlb-redis"}, Data: map[string][]byte{"l7-password": []byte("lab-unused")}},
	} {
		if _, err := kc.CoreV1().Secrets("tlb-system").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Secret tlb-system/%s: %v", s.Name, err)
		}
	}
	return roots
}

// createGatewayService creates the L4 Service of the lab's gateway:
// ports 80 and 443 on gatewayVIP, which the directors send to the gateway
// nodes, where Envoy listens on it.
func (c *cluster) createGatewayService(t *testing.T, ns, name string) {
	t.Helper()
	class := api.LoadBalancerClass
	_, err := c.kc.CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{api.AnnotationEnvironment: env, api.AnnotationVIP: gatewayVIP}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class,
			AllocateLoadBalancerNodePorts: new(false), Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}, {Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Service %s/%s: %v", ns, name, err)
	}
}

// serveBackend answers every request on addr of node n with what the
// proxy in front told it: the host asked for, the scheme the client used
// (X-Forwarded-Proto) and the address the request came from.
func serveBackend(t *testing.T, n *topo.Node, addr string) {
	t.Helper()
	ln, err := n.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s in %s: %v", addr, n.Name, err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "backend host=%s proto=%s path=%s", r.Host, r.Header.Get("X-Forwarded-Proto"), r.URL.Path)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// buildDeploy is the kustomize build of the overlay (deployOverlay) with
// the director's BGP peer set to the lab's router, as an operator's
// overlay would set it.
func buildDeploy(t *testing.T, kustomize, overlay string) []*unstructured.Unstructured {
	t.Helper()
	out, err := exec.Command(kustomize, "build", overlay).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("kustomize build %s: %v\n%s", overlay, err, ee.Stderr)
		}
		t.Fatalf("kustomize build %s: %v", overlay, err)
	}
	f := filepath.Join(t.TempDir(), "deploy.yaml")
	if err := os.WriteFile(f, out, 0o600); err != nil {
		t.Fatal(err)
	}
	objs, err := apiserver.ReadManifests(f)
	if err != nil {
		t.Fatal(err)
	}
	edited := false
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" || !strings.HasPrefix(o.GetName(), "tlb-director-config") {
			continue
		}
		cfg, _, _ := unstructured.NestedString(o.Object, "data", "director.yaml")
		peer := "{address: 192.0.2.254, asn: 64500,"
		if !strings.Contains(cfg, peer) {
			t.Fatalf("the director's ConfigMap no longer has the peer %q this test replaces:\n%s", peer, cfg)
		}
		cfg = strings.Replace(cfg, peer, "{address: 198.18.1.1, asn: 64500, localAddress: 198.18.1.2,", 1)
		if err := unstructured.SetNestedField(o.Object, cfg, "data", "director.yaml"); err != nil {
			t.Fatal(err)
		}
		edited = true
	}
	if !edited {
		t.Fatal("no tlb-director-config ConfigMap in the kustomize build of deploy/")
	}
	// One Gateway controller, not two: the VM's two emulated CPUs run the
	// API server, both nodes and every pod, and the ipam's two replicas
	// already prove leader election in real pods.
	scaled := false
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == "tlb-gateway-controller" {
			if err := unstructured.SetNestedField(o.Object, int64(1), "spec", "replicas"); err != nil {
				t.Fatal(err)
			}
			scaled = true
		}
	}
	if !scaled {
		t.Fatal("no tlb-gateway-controller Deployment in the kustomize build of deploy/")
	}
	return objs
}

// createAll creates typed objects through the dynamic client.
func createAll(s *apiserver.Server, objs []any) error {
	var us []*unstructured.Unstructured
	for _, o := range objs {
		m, err := kubetest.Unstructured(o)
		if err != nil {
			return err
		}
		us = append(us, m)
	}
	return s.CreateAll(context.Background(), us)
}

// gatewayAPICRDs are the CRDs of deploy/crds/gateway-api, which
// deploy/crds/gateway-api/install.sh installs in a cluster that has none.
func gatewayAPICRDs(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "deploy", "crds", "gateway-api", "gateway.networking.k8s.io_*.yaml"))
	var out []*unstructured.Unstructured
	for _, f := range files {
		objs, err := apiserver.ReadManifests(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, objs...)
	}
	if len(out) == 0 {
		t.Fatal("no Gateway API CRDs in deploy/crds/gateway-api")
	}
	return out
}
