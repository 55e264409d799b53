//go:build lab

package e2e_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/integration/k8snode"
	"github.com/tlbproject/tlb/integration/topo"
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

// checkGatewayPod: the gateway pod on the gateway node is Ready; its Envoy
// holds the privileges the manifest grants and nothing more, listens on
// the lab gateway's VIP:443 and :80 itself, and a client outside reaches a
// backend through it: HTTPS to the VIP through the director (replies
// straight back), certificate and SNI checked; plain HTTP is redirected.
func checkGatewayPod(t *testing.T, kc kubernetes.Interface, d *dc, node *k8snode.Node, roots *x509.CertPool, applied time.Time) {
	t.Helper()
	gw := d.gateways[0]
	waitFor(t, 10*time.Minute, "the l7 and gateway pods run on "+gw.Name+" and are Ready through their probes (l7 /readyz, Envoy /ready)", func() bool {
		failedPods(t, kc, "app.kubernetes.io/name in (tlb-l7,tlb-gateway)")
		return readyPods(kc, "app.kubernetes.io/name=tlb-l7", gw.Name) == 1 && readyPods(kc, "app.kubernetes.io/name=tlb-gateway", gw.Name) == 1
	})
	t.Logf("FIGURE gateway_pod_ready: the l7 and gateway (Envoy) pods Ready %s after deploy/ was applied", since(applied))
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
	// The kernel's IPVS counters are refreshed by its estimator (every
	// 2 s), not per packet: read right after the requests they said 0.
	var in, out int
	waitFor(t, 30*time.Second, "IPVS counts the requests to "+secure, func() bool {
		in, out = ipvsPackets(t, d.director, secure)
		return in > 0
	})
	if out != 0 {
		t.Errorf("IPVS counters of %s: InPkts %d OutPkts %d; want no replies through the director (DSR)", secure, in, out)
	}
	if r := restarts(kc, "app.kubernetes.io/name in (tlb-l7,tlb-gateway)"); r != 0 {
		t.Errorf("the l7 and gateway pods restarted %d times", r)
	}
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
