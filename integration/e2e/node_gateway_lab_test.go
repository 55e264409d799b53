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
// builds, serving deploy/examples' Service and Gateway.
const (
	envoyImage = "ghcr.io/tlbproject/envoy:v" + bootstrap.EnvoyVersion
	// gatewayVIP is the VIP of the lab's DSL gateway (TestGatewayHealth,
	// TestKubeProxyModes): a Service asks for it (tlb.io/vip).
	gatewayVIP = "203.0.113.10"
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

// checkGatewayPod: the gateway pod of deploy/'s group on the gateway node
// is Ready; its Envoy holds the privileges the manifest grants and nothing
// more, listens itself on the example Service's VIP:80 and the example
// Gateway's VIP:443 and :80, and a client outside reaches the backend
// through it: plain HTTP to the Service's VIP (the l7 annotations), HTTPS
// to the Gateway's VIP (Gateway API) with SNI and the certificate of
// Secret shop-tls checked; both through the director (replies straight
// back).
func checkGatewayPod(t *testing.T, kc kubernetes.Interface, d *dc, node *k8snode.Node, roots *x509.CertPool, serviceVIP, gatewayAddr string, applied time.Time) {
	t.Helper()
	gw := d.gateways[0]
	waitFor(t, 10*time.Minute, "the gateway pod runs on "+gw.Name+" and is Ready through its probes (l7 /readyz, Envoy /ready)", func() bool {
		failedPods(t, kc, "app.kubernetes.io/name=tlb-gateway")
		return readyPods(kc, "app.kubernetes.io/name=tlb-gateway", gw.Name) == 1
	})
	t.Logf("FIGURE gateway_pod_ready: the gateway pod (l7 + Envoy) Ready %s after deploy/ was applied", since(applied))
	pid := envoyProcess(t, kc, node)
	checkEnvoyPrivileges(t, pid)
	listens := []string{net.JoinHostPort(serviceVIP, "80"), net.JoinHostPort(gatewayAddr, "443"), net.JoinHostPort(gatewayAddr, "80")}
	waitFor(t, 3*time.Minute, "Envoy listens on "+strings.Join(listens, ", "), func() bool {
		socks := listeningSockets(t, pid)
		for _, a := range listens {
			if _, ok := socks[a]; !ok {
				return false
			}
		}
		return true
	})
	checkEnvoyListens(t, pid, listens)
	checkCapabilityMatters(t, gw, pid)

	secure := net.JoinHostPort(gatewayAddr, "443")
	waitFor(t, 3*time.Minute, "the director pod programs IPVS service "+secure+" and the netd pod binds "+gatewayAddr, func() bool {
		out, _ := d.director.Cmd("ipvsadm", "-Ln", "-t", secure).CombinedOutput()
		addrs, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
		return strings.Contains(string(out), d.gatewayAddr[0]+":443") && strings.Contains(string(addrs), gatewayAddr+"/32")
	})
	var code int
	var body string
	var err error
	first := time.Now()
	waitFor(t, 2*time.Minute, "the example Service answers http://"+exampleHost+" on "+serviceVIP+":80 through Envoy", func() bool {
		code, body, err = getThrough(d.client, nil, serviceVIP, "http://"+exampleHost+"/through-envoy")
		return err == nil && code == http.StatusOK
	})
	if want := "backend host=" + exampleHost + " proto=http path=/through-envoy"; body != want {
		t.Errorf("GET http://%s/through-envoy via %s:80: %q; want %q", exampleHost, serviceVIP, body, want)
	}
	t.Logf("FIGURE example_service_first_answer: the example Service answers through Envoy %s after the gateway pod was Ready", since(first))
	first = time.Now()
	waitFor(t, 2*time.Minute, "the example Gateway answers https://"+gatewayExampleHost+" on "+secure, func() bool {
		code, body, err = getThrough(d.client, roots, gatewayAddr, "https://"+gatewayExampleHost+"/through-envoy")
		return err == nil && code == http.StatusOK
	})
	t.Logf("FIGURE gateway_first_https: the example Gateway's first HTTPS answer through Envoy %s after the Service's", since(first))
	if want := "backend host=" + gatewayExampleHost + " proto=https path=/through-envoy"; body != want {
		t.Errorf("GET https://%s/through-envoy via %s: %q; want %q", gatewayExampleHost, secure, body, want)
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
	if r := restarts(kc, "app.kubernetes.io/name=tlb-gateway"); r != 0 {
		t.Errorf("the gateway pod restarted %d times", r)
	}
}

// getThrough is GET url from node n to vip: HTTPS to vip:443 with the
// URL's host as SNI and the certificate checked against roots, or plain
// HTTP to vip:80 for an http:// URL. It returns the status and the body.
func getThrough(n *topo.Node, roots *x509.CertPool, vip, url string) (int, string, error) {
	port := "443"
	if strings.HasPrefix(url, "http://") {
		port = "80"
	}
	host := strings.SplitN(strings.SplitN(url, "://", 2)[1], "/", 2)[0]
	hc := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return n.DialContext(ctx, network, net.JoinHostPort(vip, port))
			},
			TLSClientConfig:   &tls.Config{RootCAs: roots, ServerName: host, MinVersion: tls.VersionTLS12},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := hc.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}
