//go:build lab

package e2e_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/tlbproject/tlb/integration/k8snode"
)

// upgradeImage names the tlb image of the "next release" the upgrade step
// rolls the l7 DaemonSet to: the gateway node's containerd holds the tlb
// image under this name too, as a registry would serve a new tag.
const upgradeImage = "ghcr.io/tlbproject/tlb:upgrade"

// l7DaemonSet is deploy/'s gateway group's l7 (group "default").
const l7DaemonSet = "tlb-l7-default"

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

// upgradeL7 is the l7 upgrade of a running installation (docs/upgrading.md):
// the l7 DaemonSet's images changed to upgradeImage while a client sends
// HTTPS requests to the example Gateway's address, one connection each.
// The l7 pod is replaced, Envoy is not: the same pod, container and process, no
// restart; no request fails; the new l7 serves that Envoy (one stream
// open, none refused, on the new l7's metrics; Envoy's ADS connected).
func upgradeL7(t *testing.T, kc kubernetes.Interface, d *dc, node *k8snode.Node, roots *x509.CertPool, gatewayAddr string) {
	t.Helper()
	gw := d.gateways[0]
	if err := node.TagImage(context.Background(), tlbImage, upgradeImage); err != nil {
		t.Fatal(err)
	}
	before := gatewayEnvoy(t, kc, node)
	oldL7 := podNames(kc, "app.kubernetes.io/name=tlb-l7")
	var (
		mu       sync.Mutex
		sent     int
		failures []string
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			code, body, err := getThrough(d.client, roots, gatewayAddr, "https://"+gatewayExampleHost+"/upgrade")
			mu.Lock()
			sent++
			if err != nil || code != http.StatusOK {
				failures = append(failures, fmt.Sprintf("%s: %d %q %v", time.Now().Format("15:04:05.000"), code, body, err))
			}
			mu.Unlock()
		}
	}()
	end := sync.OnceFunc(func() { close(stop); <-done })
	defer end() // also when a wait below fails the test
	began := time.Now()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ds, err := kc.AppsV1().DaemonSets("tlb-system").Get(context.Background(), l7DaemonSet, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cs := range [][]corev1.Container{ds.Spec.Template.Spec.InitContainers, ds.Spec.Template.Spec.Containers} {
			for i := range cs {
				cs[i].Image = upgradeImage
			}
		}
		_, err = kc.AppsV1().DaemonSets("tlb-system").Update(context.Background(), ds, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("set the l7 DaemonSet's image to %s: %v", upgradeImage, err)
	}
	l7Metrics := "http://" + net.JoinHostPort(d.gatewayAddr[0], "9480") + "/metrics"
	envoyStats := "http://" + net.JoinHostPort(d.gatewayAddr[0], "9902") + "/stats/prometheus"
	waitFor(t, 8*time.Minute, "a new l7 pod of "+upgradeImage+" is Ready on "+gw.Name+" and serves Envoy's stream", func() bool {
		pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=tlb-l7"})
		if err != nil || len(pods.Items) != 1 || contains(oldL7, pods.Items[0].Name) || pods.Items[0].Spec.Containers[0].Image != upgradeImage ||
			readyPods(kc, "app.kubernetes.io/name=tlb-l7", gw.Name) != 1 {
			return false
		}
		return servesEnvoy(scrape(gw.HTTPClient(), l7Metrics)) && metricIs(scrape(gw.HTTPClient(), envoyStats), "envoy_control_plane_connected_state", "1")
	})
	t.Logf("FIGURE upgrade_l7_rollout: the l7 pod replaced and Envoy in sync with the new l7 %s after the DaemonSet changed", since(began))
	// More requests after the new l7 took over.
	mu.Lock()
	took := sent
	mu.Unlock()
	waitFor(t, 2*time.Minute, "20 more requests through the VIP after the new l7 took over", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return sent >= took+20
	})
	end()
	after := gatewayEnvoy(t, kc, node)
	if after != before {
		t.Errorf("Envoy changed during the l7 upgrade: before %+v, after %+v; want the same pod, container and process, no restart", before, after)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("FIGURE upgrade_l7_requests: %d HTTPS requests through the VIP during the l7 upgrade, %d failed", sent, len(failures))
	if len(failures) > 0 || sent < 10 {
		t.Errorf("during the l7 upgrade %d of %d requests failed (want 0 of at least 10): %v", len(failures), sent, failures)
	}
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
