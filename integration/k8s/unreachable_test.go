//go:build k8s

package k8s

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/integration/apiproxy"
)

// TestIPAMWhileAPIServerUnreachable: the ipam binary started while the API
// server is unreachable (a proxy in front of it refuses every connection)
// is alive (/healthz 200) but not Ready: /readyz answers 503 naming the
// API server and why; its log has one line per failed attempt, with the
// wait between attempts growing (backoff). Once the API server is
// reachable, it becomes Ready, takes the Lease and allocates.
func TestIPAMWhileAPIServerUnreachable(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)
	ns := "t7"
	ensureNamespace(t, kc, ns)
	ensureNamespace(t, kc, "tlb-system")
	createPool(t, dc, "t7-c", "t7", 0, "t7-pool", "198.18.70.0/29")

	host := strings.TrimPrefix(server.Config.Host, "https://")
	px := apiproxy.Start(t, host)
	px.SetCut(true)
	kubeconfig := proxyKubeconfig(t, "https://"+px.Addr())
	r := startIPAM(t, "t7-replica", kubeconfig, "--lease-name=t7-ipam")

	want := "API server https://" + px.Addr() + " unreachable"
	eventually(t, 30*time.Second, "/readyz says the API server is unreachable", func() (bool, string) {
		code, body := httpGet(r.metrics, "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, want), fmt.Sprintf("%d %q", code, body)
	})
	eventually(t, 60*time.Second, "three failed attempts logged, waits growing", func() (bool, string) {
		waits := failedAttempts(t, r.log)
		if len(waits) < 3 {
			return false, fmt.Sprintf("waits %v", waits)
		}
		for i := 1; i < len(waits); i++ {
			if waits[i] <= waits[i-1] && waits[i] < 25*time.Second {
				t.Fatalf("attempt %d waits %s after attempt %d waited %s: no backoff", i+1, waits[i], i, waits[i-1])
			}
		}
		return true, ""
	})
	if code, body := httpGet(r.metrics, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz while unreachable = %d %q; want 200 (alive, only not ready)", code, body)
	}
	if code, _ := httpGet(r.metrics, "/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz = %d while still unreachable", code)
	}
	if px.Refused() == 0 {
		t.Fatal("ipam never tried to reach the API server; the test proves nothing")
	}

	px.SetCut(false)
	eventually(t, 60*time.Second, "Ready once the API server answers", func() (bool, string) {
		code, body := httpGet(r.metrics, "/readyz")
		return code == http.StatusOK, fmt.Sprintf("%d %q", code, body)
	})
	deleteServicesAtCleanup(t, kc, ns)
	if _, err := kc.CoreV1().Services(ns).Create(ctx, lbService(ns, "web", map[string]string{api.AnnotationEnvironment: "t7"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitVIP(t, kc, ns, "web", netip.MustParseAddr("198.18.70.0"))
}

// proxyKubeconfig writes a kubeconfig for the shared server's admin that
// reaches it at host (the proxy); the certificate names 127.0.0.1.
func proxyKubeconfig(t *testing.T, host string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: host, CertificateAuthority: server.Config.CAFile}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: server.Config.BearerToken}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "admin"}
	kc.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// httpGet returns the status and body of http://addr+path (0 and the
// error when it does not answer).
func httpGet(addr, path string) (int, string) {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// failedAttempts returns the wait logged after each failed attempt to
// reach the API server, in order.
func failedAttempts(t *testing.T, logFile string) []time.Duration {
	t.Helper()
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var waits []time.Duration
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Msg     string `json:"msg"`
			Attempt int    `json:"attempt"`
			RetryIn string `json:"retryIn"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "API server unreachable; retrying with backoff" {
			continue
		}
		d, err := time.ParseDuration(line.RetryIn)
		if err != nil || line.Attempt != len(waits)+1 {
			t.Fatalf("log line %s: attempt %d, retryIn %q", sc.Text(), line.Attempt, line.RetryIn)
		}
		waits = append(waits, d)
	}
	return waits
}
