//go:build k8s

package k8sl7

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/integration/apiproxy"
	"github.com/tlbproject/tlb/integration/tlstest"
)

// l7Process is the real l7 binary serving group edge from the API server
// (through a proxy the test can cut) on a unix socket.
type l7Process struct {
	cmd     *exec.Cmd
	log     *lockedBuffer
	metrics string
	exited  chan struct{}
}

func startL7(t *testing.T, kubeconfig, socket, namespace string) *l7Process {
	t.Helper()
	bin := os.Getenv("TLB_L7_BIN")
	if bin == "" {
		t.Fatal("TLB_L7_BIN is not set: run through tools/k8s-test.sh")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := l.Addr().String()
	_ = l.Close()
	p := &l7Process{log: &lockedBuffer{}, metrics: metrics, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "--group=edge", "--config="+t.TempDir(), "--xds-addr=unix://"+socket,
		"--metrics-addr="+metrics, "--kubeconfig="+kubeconfig, "--namespaces="+namespace, "--shutdown-grace=1s")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.stop)
	return p
}

func (p *l7Process) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// get returns the status and body of a path of the metrics listener.
func (p *l7Process) get(path string) (int, string) {
	resp, err := http.Get("http://" + p.metrics + path)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// proxiedKubeconfig writes a copy of the admin kubeconfig that reaches
// the API server through addr.
func proxiedKubeconfig(t *testing.T, addr string) string {
	t.Helper()
	kc, err := clientcmd.LoadFromFile(server.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range kc.Clusters {
		c.Server = "https://" + addr
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// createRestartObjects makes an HTTPS L7 Service with its VIP, Secret and
// ready endpoint in namespace.
func createRestartObjects(t *testing.T, ctx context.Context, kc kubernetes.Interface, namespace string) {
	t.Helper()
	chain, key := tlstest.SelfSigned(t, "restart.example.com")
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}))
	must(kc.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: chain, corev1.TLSPrivateKeyKey: key}}, metav1.CreateOptions{}))
	class, no := "tlb.io/l4", false
	svc, err := kc.CoreV1().Services(namespace).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{
			api.AnnotationL7: "true", api.AnnotationL7Group: "edge", api.AnnotationL7Hosts: "restart.example.com", api.AnnotationL7TLSSecret: "tls"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class, AllocateLoadBalancerNodePorts: &no,
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443), Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	must(svc, err)
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.50"}}
	must(kc.CoreV1().Services(namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{}))
	must(kc.DiscoveryV1().EndpointSlices(namespace).Create(ctx, endpointSlice("web-1", "web", "https", 8443, map[string]bool{"198.18.5.10": true}), metav1.CreateOptions{}))
}

// fetchAll opens one state-of-the-world stream per type over the unix
// socket, as a gateway of edge, and returns each type's first response.
func fetchAll(t *testing.T, ctx context.Context, socket string, within time.Duration) map[string]*discovery.DiscoveryResponse {
	t.Helper()
	out := map[string]*discovery.DiscoveryResponse{}
	first := func(typ string, names ...string) *discovery.DiscoveryResponse {
		t.Helper()
		s := openADS(t, ctx, "unix://"+socket, "edge", typ, names...)
		select {
		case r, ok := <-s.resps:
			if !ok {
				t.Fatalf("%s stream ended: %v", typ, s.err)
			}
			return r
		case <-time.After(within):
			t.Fatalf("no %s response within %s", typ, within)
		}
		return nil
	}
	for _, typ := range []string{resource.ListenerType, resource.ClusterType} {
		out[typ] = first(typ)
	}
	names := func(typ string) []string {
		var ns []string
		for _, a := range out[typ].GetResources() {
			ns = append(ns, resourceName(t, typ, a))
		}
		return ns
	}
	for typ, want := range map[string][]string{resource.RouteType: names(resource.ListenerType), resource.EndpointType: names(resource.ClusterType), resource.SecretType: {"restart.web.tls"}} {
		out[typ] = first(typ, want...)
	}
	return out
}

// TestRestartWhileAPIServerUnreachable: l7 restarted while the API server
// cannot be reached publishes nothing (its gateway keeps what it has), is
// not ready and says why in its log and metrics; once the API server is
// back it serves the full config again, with the same versions and bytes
// as before the restart.
func TestRestartWhileAPIServerUnreachable(t *testing.T) {
	ctx := ctxFor(t, 4*time.Minute)
	kc := kubernetes.NewForConfigOrDie(server.Config)
	const namespace = "restart"
	createRestartObjects(t, ctx, kc, namespace)
	px := apiproxy.Start(t, strings.TrimPrefix(server.Config.Host, "https://"))
	kubeconfig := proxiedKubeconfig(t, px.Addr())
	socket := filepath.Join(t.TempDir(), "xds.sock")

	first := startL7(t, kubeconfig, socket, namespace)
	eventually(t, 60*time.Second, "the first l7 ready", func() (bool, string) {
		code, body := first.get("/readyz")
		return code == http.StatusOK, fmt.Sprint(code, " ", body)
	})
	before := fetchAll(t, ctx, socket, 30*time.Second)
	if ls := before[resource.ListenerType].GetResources(); len(ls) != 1 || resourceName(t, resource.ListenerType, ls[0]) != "https-203.0.113.50-443" {
		t.Fatalf("listeners before: %v", ls)
	}

	// The gateway holds its stream; l7 goes down and comes back while the
	// API server is unreachable.
	held := openADS(t, ctx, "unix://"+socket, "edge", resource.ClusterType)
	var heldFirst *discovery.DiscoveryResponse
	select {
	case heldFirst = <-held.resps:
	case <-time.After(30 * time.Second):
		t.Fatal("the held stream got nothing")
	}
	px.SetCut(true)
	first.stop()
	second := startL7(t, kubeconfig, socket, namespace)
	eventually(t, 30*time.Second, "the restarted l7 listens for ADS", func() (bool, string) {
		return strings.Contains(second.log.String(), "serving ADS"), second.log.String()
	})
	// A gateway reconnecting with the version it holds.
	again := openADSAt(t, ctx, "unix://"+socket, "edge", resource.ClusterType, heldFirst.GetVersionInfo())
	eventually(t, 60*time.Second, "the restarted l7 says it waits for the API server", func() (bool, string) {
		code, body := second.get("/readyz")
		_, m := second.get("/metrics")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "waiting for kubernetes") &&
				strings.Contains(m, `tlb_l7_source_synced{source="kubernetes"} 0`) &&
				strings.Contains(second.log.String(), "still waiting for the informer caches"),
			fmt.Sprintf("readyz %d %q", code, body)
	})
	if px.Refused() == 0 {
		t.Fatal("the restarted l7 never tried the API server; the outage proved nothing")
	}
	select {
	case r, ok := <-again.resps:
		if ok {
			t.Fatalf("the restarted l7 sent %s version %s (%d resources) while the API server was unreachable", r.GetTypeUrl(), r.GetVersionInfo(), len(r.GetResources()))
		}
		t.Fatalf("the stream was refused while the API server was unreachable: %v", again.err)
	default:
	}

	px.SetCut(false)
	eventually(t, 90*time.Second, "the restarted l7 ready once the API server is back", func() (bool, string) {
		code, body := second.get("/readyz")
		return code == http.StatusOK, fmt.Sprint(code, " ", body)
	})
	after := fetchAll(t, ctx, socket, 30*time.Second)
	for typ, b := range before {
		a := after[typ]
		if a.GetVersionInfo() != b.GetVersionInfo() || len(a.GetResources()) != len(b.GetResources()) {
			t.Errorf("%s: version %s (%d) after, %s (%d) before", typ, a.GetVersionInfo(), len(a.GetResources()), b.GetVersionInfo(), len(b.GetResources()))
			continue
		}
		for i := range b.GetResources() {
			if !slices.Equal(a.GetResources()[i].GetValue(), b.GetResources()[i].GetValue()) {
				t.Errorf("%s[%d] differs after the restart", typ, i)
			}
		}
	}
	// The gateway that reconnected with its version got nothing new: the
	// config it holds is the config served.
	select {
	case r, ok := <-again.resps:
		if ok {
			t.Errorf("a gateway holding the current version was sent %s %s", r.GetTypeUrl(), r.GetVersionInfo())
		}
	default:
	}
}
