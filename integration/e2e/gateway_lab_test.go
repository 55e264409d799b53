//go:build lab

package e2e_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/integration/topo"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// TestGatewayVIPReachableThroughDirectorAndGateway: a Gateway API
// Gateway of our class gets a VIP from the IPAM pool (status.addresses);
// the real director programs it in IPVS and announces the pool to BIRD,
// netd binds it on each gateway node, and a client's TLS connection to
// VIP:443 reaches the gateway node's listener on that VIP:443 (a plain
// TLS listener of the test in place of Envoy). Deleting the Gateway
// releases the VIP: it leaves IPVS and the gateways' tunl0.
func TestGatewayVIPReachableThroughDirectorAndGateway(t *testing.T) {
	bin := os.Getenv("TLB_BIN_DIR")
	if bin == "" {
		t.Fatal("TLB_BIN_DIR is not set: run through tools/lab-test.sh")
	}
	c := startCluster(t)
	gwKC := c.gatewayController(t)
	d := buildDC(t, 2)
	for _, n := range append([]*topo.Node{d.director}, d.gateways...) {
		reachAPIServer(t, n, c.hostport)
	}
	c.createPool(t, l4cluster, env, "lab-east-a", pool)
	for i, gw := range d.gateways {
		c.createGatewayNode(t, gw.Name, d.gatewayAddr[i])
	}
	tmp := t.TempDir()
	startLogged(t, filepath.Join(bin, "ipam"), tmp, "ipam", "--kubeconfig", c.ipamKC,
		"--metrics-addr", "127.0.0.1:9470", "--leader-election-namespace", "tlb-system", "--identity", "e2e")
	startLogged(t, filepath.Join(bin, "l7"), tmp, "gateway-controller", "gateway-controller",
		"--kubeconfig", gwKC, "--leader-election-namespace", "tlb-system", "--identity", "e2e", "--metrics-addr", "127.0.0.1:9480")
	netdFile := filepath.Join(repoRoot(t), "deploy", "netd", "netd.yaml")
	for _, gw := range d.gateways {
		gw.Start(t, filepath.Join(bin, "netd"), "run", "--config", netdFile, "--kubeconfig", c.netdKC, "--node", gw.Name)
	}
	dcfg := filepath.Join(tmp, "director.yaml")
	if err := os.WriteFile(dcfg, fmt.Appendf(nil, `director:
  metricsAddress: 127.0.0.1:9100
  runtimeDir: %s
  drainPeriod: 2s
  resyncInterval: 5s
bgp:
  localASN: 64512
  routerID: 192.0.2.1
  allowedPrefixes: [%s]
  peers:
    - {address: 198.18.1.1, asn: 64500, localAddress: 198.18.1.2, holdTimeSeconds: 3, keepaliveSeconds: 1}
`, filepath.Join(tmp, "director-run"), pool), 0o600); err != nil {
		t.Fatal(err)
	}
	d.director.Start(t, filepath.Join(bin, "tlb"), "run", "--config", dcfg, "--kubeconfig", c.directorKC,
		"--l4-cluster", l4cluster, "--router-id", "198.18.1.2")

	// The Gateway, as an application team writes it, on the class the
	// operator set up for environment "lab".
	ctx := context.Background()
	gc, err := gatewayclient.NewForConfig(c.server.Config)
	if err != nil {
		t.Fatal(err)
	}
	c.mustCreateNamespace(t, "shop")
	chain, key := tlstest.SelfSigned(t, "shop.example.com")
	if _, err := c.kc.CoreV1().Secrets("shop").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: chain, corev1.TLSPrivateKeyKey: key}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tlb.io/v1alpha1", "kind": "GatewayClassConfig",
		"metadata": map[string]any{"name": "lab"},
		"spec":     map[string]any{"environment": env},
	}}
	if err := c.server.CreateAll(ctx, []*unstructured.Unstructured{cfg}); err != nil {
		t.Fatalf("create GatewayClassConfig lab: %v", err)
	}
	if _, err := gc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "tlb-lab"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName,
			ParametersRef: &gatewayv1.ParametersReference{Group: "tlb.io", Kind: "GatewayClassConfig", Name: "lab"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	tlsMode := gatewayv1.TLSModeTerminate
	if _, err := gc.GatewayV1().Gateways("shop").Create(ctx, &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "tlb-lab", Listeners: []gatewayv1.Listener{{
			Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{Mode: &tlsMode, CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "shop-tls"}}},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var vip string
	waitFor(t, 3*time.Minute, "Gateway shop/shop gets a VIP in status.addresses", func() bool {
		g, err := gc.GatewayV1().Gateways("shop").Get(ctx, "shop", metav1.GetOptions{})
		if err != nil || len(g.Status.Addresses) == 0 {
			return false
		}
		vip = g.Status.Addresses[0].Value
		return true
	})
	if !prefixContains(t, pool, vip) {
		t.Fatalf("the Gateway's VIP %s is not from pool %s", vip, pool)
	}
	t.Logf("Gateway shop/shop: VIP %s after %s", vip, since(created))
	target := net.JoinHostPort(vip, "443")

	// The stand-in for the gateway's Envoy: a TLS listener bound on
	// VIP:443 (freebind, as Envoy's listeners are) on every gateway node.
	cert, err := tls.X509KeyPair(chain, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, gw := range d.gateways {
		ln, err := gw.ListenFreebind("tcp", target)
		if err != nil {
			t.Fatalf("listen on %s in %s: %v", target, gw.Name, err)
		}
		tln := tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		go serveName(tln, gw.Name)
		t.Cleanup(func() { _ = tln.Close() })
	}

	waitFor(t, 2*time.Minute, "the director programs IPVS service "+target+" over both gateways", func() bool {
		out, _ := d.director.Cmd("ipvsadm", "-Ln", "-t", target).CombinedOutput()
		return strings.Contains(string(out), d.gatewayAddr[0]+":443") && strings.Contains(string(out), d.gatewayAddr[1]+":443")
	})
	for _, gw := range d.gateways {
		waitFor(t, 2*time.Minute, gw.Name+" binds "+vip+" on tunl0", func() bool {
			out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
			return strings.Contains(string(out), vip+"/32")
		})
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, _, err := d.bird.WaitRoutes(wctx, pool, 2*time.Minute, func(rs []birdlab.Route) bool {
		return len(rs) == 1 && rs[0].NextHop == "198.18.1.2"
	}); err != nil {
		t.Fatalf("the router learns %s from the director: %v", pool, err)
	}
	var first string
	waitFor(t, time.Minute, "the client completes a TLS handshake with "+target, func() bool {
		first, err = tlsName(d, target)
		return err == nil
	})
	t.Logf("first TLS answer through the Gateway's VIP %s (from %s) %s after the Gateway was created", target, first, since(created))
	seen := map[string]int{}
	for i := range 20 {
		name, err := tlsName(d, target)
		if err != nil {
			t.Fatalf("TLS connection %d to %s: %v", i, target, err)
		}
		seen[name]++
	}
	t.Logf("%s, 20 new TLS connections: %v", target, seen)
	for _, gw := range d.gateways {
		if seen[gw.Name] == 0 {
			t.Errorf("gateway %s answered none of 20 connections to %s (%v): Maglev should use both", gw.Name, target, seen)
		}
	}

	// Deleting the Gateway releases the VIP everywhere.
	if err := gc.GatewayV1().Gateways("shop").Delete(ctx, "shop", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the Gateway's VIP Service is deleted", func() bool {
		svcs, err := c.kc.CoreV1().Services("shop").List(ctx, metav1.ListOptions{LabelSelector: api.LabelOwningGateway})
		return err == nil && len(svcs.Items) == 0
	})
	waitFor(t, time.Minute, "the director removes IPVS service "+target, func() bool {
		out, err := d.director.Cmd("ipvsadm", "-Ln", "-t", target).CombinedOutput()
		return err != nil && !strings.Contains(string(out), d.gatewayAddr[0])
	})
	for _, gw := range d.gateways {
		waitFor(t, time.Minute, gw.Name+" unbinds "+vip, func() bool {
			out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
			return !strings.Contains(string(out), vip+"/32")
		})
	}
}

// gatewayController applies the Gateway controller's RBAC of deploy/ and
// returns a kubeconfig with its ServiceAccount's token.
func (c *cluster) gatewayController(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	objs, err := apiserver.ReadManifests(filepath.Join(repoRoot(t), "deploy", "gateway", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.server.CreateAll(ctx, objs); err != nil {
		t.Fatalf("apply deploy/gateway/rbac.yaml: %v", err)
	}
	kc, err := c.server.ServiceAccountKubeconfig(ctx, "tlb-system", "tlb-gateway-controller")
	if err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, kc, "tlb-gateway-controller", authorizationv1.ResourceAttributes{
		Verb: "list", Group: gatewayv1.GroupName, Resource: "gateways"})
	return kc
}

// serveName answers each TLS connection with the gateway's name.
func serveName(ln net.Listener, name string) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			_, _ = io.WriteString(conn, name)
		}()
	}
}

// tlsName opens a new TLS connection from the client to target (SNI
// shop.example.com, the test's certificate trusted by pinning) and
// returns what the gateway says.
func tlsName(d *dc, target string) (string, error) {
	raw, err := d.client.Dial("tcp", target)
	if err != nil {
		return "", err
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(5 * time.Second))
	conn := tls.Client(raw, &tls.Config{ServerName: "shop.example.com", InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // the test's own self-signed certificate; the handshake is what is checked
	if err := conn.Handshake(); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}
