//go:build lab

package e2e_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/integration/topo"
)

// What deploy/examples names, which TestDeployOnRealNodes serves as it is.
const (
	// examplePool is the CIDR of VIPPool prod-east-1-a, of the L4 cluster
	// the director of deploy/ serves (deploy/site/site.yaml).
	examplePool = "203.0.113.0/24"
	// exampleHost is what the example Service answers (tlb.io/l7-hosts) on
	// its VIP:80; gatewayExampleHost what the example Gateway answers on
	// its VIP:443 with the certificate of Secret default/shop-tls.
	exampleHost        = "shop.example.com"
	gatewayExampleHost = "store.example.com"
)

// documentedSteps are the commands of docs/kubernetes.md, "Deploying",
// in order, as the test performs them (checkDocumentedSteps holds the two
// together):
//   - the node labels: the kubelets register with them (k8snode
//     Options.Labels);
//   - the site edit: buildInstall sets the director's BGP peer in a copy
//     of deploy/site/director.yaml to the lab's router, the only edit;
//   - install.sh: the Gateway API CRDs into this new cluster, which has
//     none (gatewayAPICRDs);
//   - kubectl apply -k deploy/: the real kustomize's build of that copy,
//     created through the API server, the custom resources once their
//     CRDs are served (as a second apply would);
//   - the Secrets: createInstallSecrets, with the keys the commands give;
//   - the examples: deploy/examples/*.yaml created as they are.
var documentedSteps = []string{
	"kubectl label node DIRECTOR-NODE tlb.io/director=true",
	"kubectl label node GATEWAY-NODE tlb.io/gateway=true tlb.io/gateway-group=",
	"$EDITOR deploy/site/director.yaml",
	"deploy/crds/gateway-api/install.sh",
	"kubectl apply -k deploy/",
	`kubectl -n tlb-system create secret generic tlb-redis --from-literal=l7-password="$(head -c 32 /dev/urandom | base64 | tr -d '/+=')" --from-literal=ratelimit-password="$(head -c 32 /dev/urandom | base64 | tr -d '/+=')" --from-literal=sessions-password="$(head -c 32 /dev/urandom | base64 | tr -d '/+=')"`,
	"kubectl apply -f deploy/examples/pools.yaml -f deploy/examples/service.yaml -f deploy/examples/gateway.yaml",
	"openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj /CN=store.example.com -addext subjectAltName=DNS:store.example.com -keyout shop.key -out shop.crt",
	"kubectl -n default create secret tls shop-tls --cert=shop.crt --key=shop.key",
}

// checkDocumentedSteps: the first sh block after "### The steps" in
// docs/kubernetes.md holds exactly documentedSteps (comments and line
// continuations aside).
func checkDocumentedSteps(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "kubernetes.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)### The steps\n.*?```sh\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal(`docs/kubernetes.md has no "### The steps" with a sh block`)
	}
	var got []string
	joined := strings.ReplaceAll(string(m[1]), "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		line, _, _ = strings.Cut(line, " #")
		line = strings.Join(strings.Fields(line), " ")
		if line != "" && !strings.HasPrefix(line, "#") {
			got = append(got, line)
		}
	}
	if !slices.Equal(got, documentedSteps) {
		t.Fatalf("docs/kubernetes.md's steps are\n  %s\nthis test performs\n  %s", strings.Join(got, "\n  "), strings.Join(documentedSteps, "\n  "))
	}
}

// buildInstall copies deploy/ into a new directory, makes the one edit
// the steps name (the site's BGP peer: the lab's router, which expects the
// director on 198.18.1.2) and any further edits of the site's director
// file (the upgrade test's graceful restart), and returns the real
// kustomize's build of it.
func buildInstall(t *testing.T, kustomize string, edits ...func(t *testing.T, what, text string) string) []*unstructured.Unstructured {
	t.Helper()
	src := filepath.Join(repoRoot(t), "deploy")
	dst := filepath.Join(t.TempDir(), "deploy")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(dst, "site", "director.yaml")
	b, err := os.ReadFile(site)
	if err != nil {
		t.Fatal(err)
	}
	text := siteEdit(t, "deploy/site/director.yaml", string(b))
	for _, edit := range edits {
		text = edit(t, "deploy/site/director.yaml", text)
	}
	if err := os.WriteFile(site, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kustomize, "build", dst).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("kustomize build deploy/: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("kustomize build deploy/: %v", err)
	}
	return readManifestText(t, string(out))
}

// siteEdit makes the site's edit in the director file: the BGP peer
// becomes the lab's router.
func siteEdit(t *testing.T, what, text string) string {
	t.Helper()
	peer := "{address: 192.0.2.254, asn: 64500,"
	if strings.Count(text, peer) != 1 {
		t.Fatalf("%s no longer has the one peer %q this test replaces:\n%s", what, peer, text)
	}
	return strings.Replace(text, peer, "{address: 198.18.1.1, asn: 64500, localAddress: 198.18.1.2,", 1)
}

// readManifestText reads YAML documents as the API server's objects.
func readManifestText(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, err := apiserver.ReadManifests(f)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// readExamples reads deploy/examples' files (not its overlays) as they
// are.
func readExamples(t *testing.T, files ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, f := range files {
		objs, err := apiserver.ReadManifests(filepath.Join(repoRoot(t), "deploy", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, objs...)
	}
	return out
}

// createRedisSecret creates Secret tlb-system/tlb-redis as the documented
// command does: three random passwords under its three keys.
func createRedisSecret(t *testing.T, kc kubernetes.Interface) {
	t.Helper()
	data := map[string][]byte{}
	for _, k := range []string{"l7-password", "ratelimit-password", "sessions-password"} {
		data[k] = []byte(fmt.Sprintf("lab-%s-%d", k, time.Now().UnixNano()))
	}
	_, err := kc.CoreV1().Secrets("tlb-system").Create(context.Background(),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tlb-redis"}, Data: data}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Secret tlb-system/tlb-redis: %v", err)
	}
}

// createExampleCertificate creates Secret default/shop-tls as the
// documented openssl and kubectl commands do: a self-signed certificate
// for the example Gateway's host, returned as the pool a client verifies
// it with.
func createExampleCertificate(t *testing.T, kc kubernetes.Interface) *x509.CertPool {
	t.Helper()
	chain, key := tlstest.SelfSigned(t, gatewayExampleHost)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(chain) {
		t.Fatal("the test certificate does not parse")
	}
	_, err := kc.CoreV1().Secrets("default").Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: chain, corev1.TLSPrivateKeyKey: key},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Secret default/shop-tls: %v", err)
	}
	return roots
}

// createExampleEndpoints stands in for the example Service's pods (app:
// shop, port 8080), which are the user's: an EndpointSlice of Service
// default/shop whose one ready endpoint is backend on the gateway node.
func createExampleEndpoints(t *testing.T, kc kubernetes.Interface, addr string, port int32) {
	t.Helper()
	name, proto, ready := "http", corev1.ProtocolTCP, true
	_, err := kc.DiscoveryV1().EndpointSlices("default").Create(context.Background(), &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-lab", Labels: map[string]string{
			discoveryv1.LabelServiceName: "shop", discoveryv1.LabelManagedBy: "tlb.lab"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &proto}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create EndpointSlice default/shop-lab: %v", err)
	}
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
// (X-Forwarded-Proto) and the path.
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

// gatewayAPICRDs are the CRDs of deploy/crds/gateway-api, which
// deploy/crds/gateway-api/install.sh installs in a cluster that has none.
func gatewayAPICRDs(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	files, _ := fs.Glob(os.DirFS(repoRoot(t)), "deploy/crds/gateway-api/gateway.networking.k8s.io_*.yaml")
	var out []*unstructured.Unstructured
	for _, f := range files {
		objs, err := apiserver.ReadManifests(filepath.Join(repoRoot(t), f))
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

// waitAddress waits until get returns an address from examplePool (the
// ipam pods allocate it; for a Gateway the Gateway controller copies it
// into its status) and returns it.
func waitAddress(t *testing.T, what string, created time.Time, get func() string) string {
	t.Helper()
	var addr string
	waitFor(t, 3*time.Minute, what+" has a VIP", func() bool {
		addr = get()
		return addr != ""
	})
	if !prefixContains(t, examplePool, addr) {
		t.Fatalf("VIP %s of %s is not from the examples' pool %s", addr, what, examplePool)
	}
	t.Logf("%s: VIP %s after %s", what, addr, since(created))
	return addr
}

// gatewayAddress is the first address in the status of Gateway ns/name,
// or "".
func gatewayAddress(t *testing.T, s *apiserver.Server, ns, name string) string {
	t.Helper()
	dc, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	g, err := dc.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	addrs, _, _ := unstructured.NestedSlice(g.Object, "status", "addresses")
	if len(addrs) == 0 {
		return ""
	}
	a, _ := addrs[0].(map[string]any)
	v, _ := a["value"].(string)
	return v
}
