//go:build lab

package e2e_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/integration/k8snode"
	"github.com/tlbproject/tlb/integration/loadloop"
)

// envoyState is what must not change across an l7 upgrade: the gateway
// pod, its Envoy container and that container's process.
type envoyState struct {
	pod, containerID string
	restarts         int32
	pid              int
}

func gatewayEnvoy(t *testing.T, kc kubernetes.Interface, node *k8snode.Node) envoyState {
	t.Helper()
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=tlb-gateway"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if p.Spec.NodeName == node.Name && cs.Name == "envoy" {
				return envoyState{pod: p.Name, containerID: cs.ContainerID, restarts: cs.RestartCount, pid: envoyProcess(t, kc, node)}
			}
		}
	}
	t.Fatalf("no envoy container of a tlb-gateway pod on %s", node.Name)
	return envoyState{}
}

// startHTTPSLoad sends HTTPS requests for url to the example Gateway's
// address from the client outside, one connection each, until stopped.
func startHTTPSLoad(d *dc, roots *x509.CertPool, gatewayAddr, url string) *loadloop.Loop {
	return loadloop.Start(func() error {
		code, body, err := getThrough(d.client, roots, gatewayAddr, url)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("%d %q", code, body)
		}
		return nil
	})
}

// moreRequests waits until l has sent n more requests.
func moreRequests(t *testing.T, l *loadloop.Loop, n int, what string) {
	t.Helper()
	from := l.Sent()
	waitFor(t, 2*time.Minute, fmt.Sprintf("%d more requests through the VIP %s", n, what), func() bool {
		return l.Sent() >= from+n
	})
}

// scrape returns the body of a metrics page, "" on any error.
func scrape(hc *http.Client, url string) string {
	resp, err := hc.Get(url)
	if err != nil {
		return ""
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// servesEnvoy reports whether an l7's metrics show one open xDS stream (the
// Envoy beside it; Envoy's delta stream) and no stream refused.
func servesEnvoy(metrics string) bool {
	if !metricIs(metrics, "tlb_l7_xds_streams", "1") {
		return false
	}
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, "tlb_l7_xds_refused_streams_total{") && !strings.HasSuffix(line, " 0") {
			return false
		}
	}
	return true
}

// metricIs reports whether a Prometheus text page has series name (with
// or without labels) with value v.
func metricIs(metrics, name, v string) bool {
	for _, line := range strings.Split(metrics, "\n") {
		if (strings.HasPrefix(line, name+" ") || strings.HasPrefix(line, name+"{")) && strings.HasSuffix(line, " "+v) {
			return true
		}
	}
	return false
}
