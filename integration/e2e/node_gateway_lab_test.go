//go:build lab

package e2e_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/integration/k8snode"
	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/ipam"
	"github.com/tlbproject/tlb/l7/bootstrap"
)

// The L7 part of TestDeployOnRealNodes: deploy/envoy's gateway DaemonSet
// in a real pod of the gateway node, running the Envoy image make image
// builds, with the lab's own gateway.
const (
	envoyImage = "ghcr.io/tlbproject/envoy:v" + bootstrap.EnvoyVersion
	// gatewayVIP is the VIP of the lab's gateway: Service shop/edge asks
	// for it (tlb.io/vip) and the test's DSL puts Envoy's listeners on it.
	gatewayVIP  = "203.0.113.10"
	gatewayHost = "shop.example.com"
	// backendPort is where the backend listens on the gateway node's own
	// address; Envoy proxies to it.
	backendPort = "8080"
	// capNetBindService is CAP_NET_BIND_SERVICE's bit in /proc/PID/status.
	capNetBindService = 1 << 10
	// fileCapNetBindService is the security.capability value of
	// `setcap cap_net_bind_service=ep` (vfs_cap_data revision 2), which
	// the image's layer carries for /usr/local/bin/envoy.
	fileCapNetBindService = "0100000200040000000000000000000000000000"
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
		{ObjectMeta: metav1.ObjectMeta{Name: "tlb-redis"}, Data: map[string][]byte{"password": []byte("lab-unused")}},
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
	class := ipam.LoadBalancerClass
	_, err := c.kc.CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{ipam.AnnotationEnvironment: env, ipam.AnnotationVIP: gatewayVIP}},
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

// failedPods fails the test at once when a pod of selector has failed
// (the kubelet evicted it, say), with the kubelet's reason.
func failedPods(t *testing.T, kc kubernetes.Interface, selector string) {
	t.Helper()
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodFailed {
			t.Fatalf("pod %s on %s failed: %s: %s", p.Name, p.Spec.NodeName, p.Status.Reason, p.Status.Message)
		}
	}
}

// envoyProcess is the Envoy container of the gateway pod on node as the
// node's containerd runs it.
func envoyProcess(t *testing.T, kc kubernetes.Interface, node *k8snode.Node) int {
	t.Helper()
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=tlb-gateway"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != node.Name {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name != "envoy" {
				continue
			}
			pid, err := node.ContainerPID(context.Background(), cs.ContainerID)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("no envoy container of a tlb-gateway pod on %s", node.Name)
	return 0
}

// procStatus reads the fields of /proc/PID/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return out
}

// checkEnvoyPrivileges: the gateway's Envoy runs as the manifest says
// (user and group 101, no privilege escalation) and holds exactly
// CAP_NET_BIND_SERVICE, which it can only have from its file capability
// (Kubernetes gives a non-root process no ambient capabilities): the
// executable containerd unpacked carries the layer's security.capability.
func checkEnvoyPrivileges(t *testing.T, pid int) {
	t.Helper()
	st := procStatus(t, pid)
	want := map[string]string{
		"Uid":        "101 101 101 101",
		"Gid":        "101 101 101 101",
		"CapEff":     fmt.Sprintf("%016x", capNetBindService),
		"CapPrm":     fmt.Sprintf("%016x", capNetBindService),
		"CapInh":     fmt.Sprintf("%016x", 0),
		"CapAmb":     fmt.Sprintf("%016x", 0),
		"NoNewPrivs": "1",
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("envoy (pid %d) %s: %q; want %q", pid, k, st[k], v)
		}
	}
	t.Logf("envoy pid %d: Uid %s, CapEff %s, CapPrm %s, CapBnd %s, CapAmb %s, NoNewPrivs %s", pid, st["Uid"], st["CapEff"], st["CapPrm"], st["CapBnd"], st["CapAmb"], st["NoNewPrivs"])
	buf := make([]byte, 64)
	n, err := syscall.Getxattr(fmt.Sprintf("/proc/%d/exe", pid), "security.capability", buf)
	if err != nil {
		t.Fatalf("security.capability of envoy's executable as containerd unpacked it: %v", err)
	}
	if got := hex.EncodeToString(buf[:n]); got != fileCapNetBindService {
		t.Errorf("security.capability of envoy's executable = %s; want %s (cap_net_bind_service=ep)", got, fileCapNetBindService)
	}
}

// listeningSockets are the TCP sockets in LISTEN state of the network
// namespace of pid that the process itself holds, by local address, with
// the user that opened each.
func listeningSockets(t *testing.T, pid int) map[string]int {
	t.Helper()
	held := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil {
			if inode, ok := strings.CutPrefix(l, "socket:["); ok {
				held[strings.TrimSuffix(inode, "]")] = true
			}
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "0A" || !held[f[9]] {
			continue
		}
		ipHex, portHex, _ := strings.Cut(f[1], ":")
		ip, err1 := strconv.ParseUint(ipHex, 16, 32)
		port, err2 := strconv.ParseUint(portHex, 16, 16)
		uid, err3 := strconv.Atoi(f[7])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("unreadable line of /proc/%d/net/tcp: %q", pid, line)
		}
		addr := make(net.IP, 4)
		binary.LittleEndian.PutUint32(addr, uint32(ip))
		out[net.JoinHostPort(addr.String(), strconv.Itoa(int(port)))] = uid
	}
	return out
}

// checkEnvoyListens: Envoy's own sockets listen on gatewayVIP:443 and :80,
// opened as user 101, in the node's network namespace (the pod's, with
// hostNetwork).
func checkEnvoyListens(t *testing.T, pid int) {
	t.Helper()
	socks := listeningSockets(t, pid)
	for _, port := range []string{"443", "80"} {
		addr := net.JoinHostPort(gatewayVIP, port)
		uid, ok := socks[addr]
		if !ok {
			t.Errorf("envoy (pid %d) holds no socket listening on %s; its listening sockets: %v", pid, addr, socks)
		} else if uid != 101 {
			t.Errorf("envoy's socket on %s belongs to uid %d; want 101", addr, uid)
		}
	}
	t.Logf("envoy's listening sockets (address: uid): %v", socks)
}

// httpsClient reaches gatewayVIP:443 from node n as a browser asking for
// gatewayHost would: SNI and the certificate checked against roots.
func httpsClient(n *topo.Node, roots *x509.CertPool) *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return n.DialContext(ctx, network, net.JoinHostPort(gatewayVIP, "443"))
			},
			TLSClientConfig:   &tls.Config{RootCAs: roots, ServerName: gatewayHost, MinVersion: tls.VersionTLS12},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// getThroughGateway is GET url from node n through the gateway: HTTPS to
// gatewayVIP:443 (the URL's host is the name asked for), or plain HTTP to
// gatewayVIP:80 for an http:// URL. It returns the status, the Location
// header and the body.
func getThroughGateway(n *topo.Node, roots *x509.CertPool, url string) (int, string, string, error) {
	hc := httpsClient(n, roots)
	if strings.HasPrefix(url, "http://") {
		hc.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return n.DialContext(ctx, network, net.JoinHostPort(gatewayVIP, "80"))
		}
	}
	resp, err := hc.Get(url)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b), err
}

// checkGatewayPod: the gateway pod on the gateway node is Ready; its Envoy
// holds the privileges the manifest grants and nothing more, listens on
// the lab gateway's VIP:443 and :80 itself, and a client outside reaches a
// backend through it: HTTPS to the VIP through the director (replies
// straight back), certificate and SNI checked; plain HTTP is redirected.
func checkGatewayPod(t *testing.T, kc kubernetes.Interface, d *dc, node *k8snode.Node, roots *x509.CertPool, applied time.Time) {
	t.Helper()
	gw := d.gateways[0]
	waitFor(t, 10*time.Minute, "the gateway pod runs on "+gw.Name+" and is Ready through its probes (l7 /readyz, Envoy /ready)", func() bool {
		failedPods(t, kc, "app.kubernetes.io/name=tlb-gateway")
		return readyPods(kc, "app.kubernetes.io/name=tlb-gateway", gw.Name) == 1
	})
	t.Logf("FIGURE gateway_pod_ready: the gateway pod (l7 + Envoy) Ready %s after deploy/ was applied", since(applied))
	pid := envoyProcess(t, kc, node)
	checkEnvoyPrivileges(t, pid)
	waitFor(t, 2*time.Minute, "Envoy listens on "+gatewayVIP+":443 and :80", func() bool {
		socks := listeningSockets(t, pid)
		_, secured := socks[net.JoinHostPort(gatewayVIP, "443")]
		_, plain := socks[net.JoinHostPort(gatewayVIP, "80")]
		return secured && plain
	})
	checkEnvoyListens(t, pid)
	checkCapabilityMatters(t, gw, pid)

	secure := net.JoinHostPort(gatewayVIP, "443")
	waitFor(t, 3*time.Minute, "the director pod programs IPVS service "+secure+" and the netd pod binds "+gatewayVIP, func() bool {
		out, _ := d.director.Cmd("ipvsadm", "-Ln", "-t", secure).CombinedOutput()
		addrs, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
		return strings.Contains(string(out), d.gatewayAddr[0]+":443") && strings.Contains(string(addrs), gatewayVIP+"/32")
	})
	var code int
	var loc, body string
	var err error
	first := time.Now()
	waitFor(t, 2*time.Minute, "the client's HTTPS request to "+secure+" is answered", func() bool {
		code, _, body, err = getThroughGateway(d.client, roots, "https://"+gatewayHost+"/through-envoy")
		return err == nil
	})
	t.Logf("FIGURE gateway_first_https: first HTTPS answer through Envoy %s after the pod was Ready", since(first))
	if want := "backend host=" + gatewayHost + " proto=https path=/through-envoy"; code != http.StatusOK || body != want {
		t.Errorf("GET https://%s/through-envoy via %s: %d %q; want 200 %q", gatewayHost, secure, code, body, want)
	}
	code, loc, _, err = getThroughGateway(d.client, roots, "http://"+gatewayHost+"/x?y=1")
	if err != nil || code != http.StatusMovedPermanently || loc != "https://"+gatewayHost+"/x?y=1" {
		t.Errorf("GET http://%s/x?y=1 via %s:80: %d Location %q (%v); want 301 to https://%s/x?y=1", gatewayHost, gatewayVIP, code, loc, err, gatewayHost)
	}
	if in, out := ipvsPackets(t, d.director, secure); in == 0 || out != 0 {
		t.Errorf("IPVS counters of %s: InPkts %d OutPkts %d; want requests in and no replies through the director (DSR)", secure, in, out)
	}
	if r := restarts(kc, "app.kubernetes.io/name=tlb-gateway"); r != 0 {
		t.Errorf("the gateway pod restarted %d times", r)
	}
}

// checkCapabilityMatters is the control: the image's own Envoy binary
// (copied from the running container, which drops extended attributes)
// run in the gateway node as the pod runs it (user and group 101,
// permitted and effective {NET_BIND_SERVICE} kept across setuid, no
// ambient capabilities, no_new_privs: what runc sets up, here with capsh)
// cannot bind a port below 1024, and binds it once the copy carries the
// security.capability of the image's file.
func checkCapabilityMatters(t *testing.T, gw *topo.Node, pid int) {
	t.Helper()
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	caps := make([]byte, 64)
	n, err := syscall.Getxattr(exe, "security.capability", caps)
	if err != nil {
		t.Fatal(err)
	}
	caps = caps[:n]
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // user 101 reads it
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	plain, withCap := filepath.Join(dir, "envoy-plain"), filepath.Join(dir, "envoy-cap")
	for _, p := range []string{plain, withCap} {
		if err := os.WriteFile(p, bin, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Setxattr(withCap, "security.capability", caps, 0); err != nil {
		t.Fatal(err)
	}
	const addr = "127.77.0.9:443"
	host, port, _ := net.SplitHostPort(addr)
	boot := filepath.Join(dir, "bootstrap.yaml")
	if err := os.WriteFile(boot, []byte(fmt.Sprintf(`static_resources:
  listeners:
    - name: control
      address: {socket_address: {address: %s, port_value: %s}}
      filter_chains:
        - filters:
            - name: envoy.filters.network.echo
              typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.network.echo.v3.Echo}
`, host, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, envoy string) *exec.Cmd {
		return gw.CmdContext(ctx, "capsh", "--keep=1", "--gid=101", "--groups=101", "--uid=101",
			"--caps=cap_net_bind_service+ep", "--no-new-privs", "--shell="+envoy,
			"--", "-c", boot, "--disable-hot-restart", "--log-level", "warn")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := run(ctx, plain).CombinedOutput()
	if want := "cannot bind '" + addr + "': Permission denied"; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("the image's Envoy without its file capability, as user 101: %v\n%s\nwant it to exit with %q", err, out, want)
	} else {
		t.Logf("control: without the file capability the image's Envoy exits: %q", want)
	}
	var log strings.Builder
	cmd := run(ctx, withCap)
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	waitFor(t, 2*time.Minute, "the copy with the image's file capability listens on "+addr, func() bool {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the copy with the file capability exited: %v\n%s", err, log.String())
		default:
		}
		c, err := gw.Dial("tcp", addr)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
	t.Logf("control: with the image's file capability the same binary binds %s as user 101", addr)
}
