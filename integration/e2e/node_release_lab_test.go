//go:build lab

package e2e_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/integration/k8snode"
)

// previousRelease is the newest release kept in deploy/releases as the lab
// runs it: tools/lab-test.sh builds its tlb image again from the commit its
// manifests name (tools/release/previous.sh), since the lab has no
// registry to pull the released image from.
type previousRelease struct {
	version, manifests, imageTar string
}

func previousFromEnv(t *testing.T) previousRelease {
	t.Helper()
	p := previousRelease{version: os.Getenv("TLB_PREVIOUS_VERSION"), manifests: os.Getenv("TLB_PREVIOUS_MANIFESTS"), imageTar: os.Getenv("TLB_PREVIOUS_IMAGE_TAR")}
	if p.version == "" || p.manifests == "" || p.imageTar == "" {
		t.Fatal("TLB_PREVIOUS_VERSION, TLB_PREVIOUS_MANIFESTS and TLB_PREVIOUS_IMAGE_TAR must be set: run through tools/lab-test.sh, with a release in deploy/releases")
	}
	return p
}

// image is the name the release's tlb image has in the nodes' containerd.
func (p previousRelease) image() string { return "ghcr.io/tlbproject/tlb:" + p.version }

// pinned is an image of ours named by tag and digest, as a release names it.
var pinned = regexp.MustCompile(`(ghcr\.io/tlbproject/(?:tlb|envoy):v[0-9]+\.[0-9]+\.[0-9]+)@sha256:[0-9a-f]{64}`)

// objects are the release's manifests as this site applies them: the
// site's edit (siteEdit, with graceful restart) and its images by tag,
// as the nodes hold them (the digests are those of the registry's
// multi-architecture indexes). The release must run this tree's Envoy:
// an upgrade that changes Envoy restarts it, which this test is not about.
func (p previousRelease) objects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(p.manifests)
	if err != nil {
		t.Fatal(err)
	}
	text := pinned.ReplaceAllString(string(b), "$1")
	for _, img := range []string{p.image(), envoyImage} {
		if !strings.Contains(text, "image: "+img+"\n") {
			t.Fatalf("%s runs no %s: upgrading from %s is not an upgrade that keeps Envoy (docs/upgrading.md)", p.manifests, img, p.version)
		}
	}
	return readManifestText(t, siteEdit(t, p.manifests, text, true))
}

// upgradeFromRelease is the upgrade of docs/upgrading.md, from the newest
// release to this tree, on the running installation: first the release's
// manifests are applied (the installation runs the previous release, with
// graceful restart at the site's one director), then, while a client sends
// HTTPS requests to the example Gateway's address through the director,
// this tree's build of deploy/. Every pod of the tlb image is replaced, the
// director's, netd's and l7's included; Envoy is not: the same pod,
// container and process from before the release was applied to the end,
// and no request fails.
func upgradeFromRelease(t *testing.T, s *apiserver.Server, kc kubernetes.Interface, d *dc, node *k8snode.Node, roots *x509.CertPool, gatewayAddr, kustomize string, prev previousRelease) {
	t.Helper()
	ctx := context.Background()
	before := gatewayEnvoy(t, kc, node)
	began := time.Now()
	if err := s.ApplyAll(ctx, prev.objects(t)); err != nil {
		t.Fatalf("apply release %s: %v", prev.version, err)
	}
	waitRolled(t, kc, prev.image())
	waitServing(t, d, gatewayAddr)
	t.Logf("FIGURE upgrade_previous_release: the installation runs %s (every tlb pod replaced and Ready, Envoy served) %s after its manifests were applied", prev.version, since(began))

	load := startHTTPSLoad(d, roots, gatewayAddr, "https://"+gatewayExampleHost+"/upgrade")
	defer load.Stop()
	moreRequests(t, load, 20, "before the upgrade")
	upgraded := time.Now()
	if err := s.ApplyAll(ctx, buildInstall(t, kustomize, true)); err != nil {
		t.Fatalf("apply this tree's deploy/ over %s: %v", prev.version, err)
	}
	waitRolled(t, kc, tlbImage)
	waitServing(t, d, gatewayAddr)
	t.Logf("FIGURE upgrade_rollout: every tlb pod runs this tree's image and is Ready, Envoy served by the new l7, %s after deploy/ was applied over %s", since(upgraded), prev.version)
	moreRequests(t, load, 20, "after the upgrade")
	load.Stop()
	if after := gatewayEnvoy(t, kc, node); after != before {
		t.Errorf("Envoy changed across the upgrade from %s: before %+v, after %+v; want the same pod, container and process, no restart", prev.version, before, after)
	}
	sent, failures := load.Counts()
	t.Logf("FIGURE upgrade_requests: %d HTTPS requests through the VIP during the upgrade from %s (director, netd, ipam, Gateway controller, console and l7 replaced), %d failed", sent, prev.version, len(failures))
	if len(failures) > 0 || sent < 40 {
		t.Errorf("during the upgrade from %s %d of %d requests failed (want 0 of at least 40): %v", prev.version, len(failures), sent, failures)
	}
}

// waitRolled waits until every pod of tlb-system that runs a tlb image
// runs image and none is being deleted, and the director, netd, l7, both
// ipam pods and a Gateway controller are Ready.
func waitRolled(t *testing.T, kc kubernetes.Interface, image string) {
	t.Helper()
	var why string
	ok := func() bool {
		why = ""
		pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			why = err.Error()
			return false
		}
		for _, p := range pods.Items {
			for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
				if strings.HasPrefix(c.Image, "ghcr.io/tlbproject/tlb:") && (c.Image != image || p.DeletionTimestamp != nil) {
					why = fmt.Sprintf("pod %s runs %s (deleting: %t)", p.Name, c.Image, p.DeletionTimestamp != nil)
					return false
				}
			}
		}
		for sel, n := range map[string]int{"tlb-director": 1, "tlb-netd": 1, "tlb-l7": 1, "tlb-ipam": 2, "tlb-gateway-controller": 1} {
			if got := readyPods(kc, "app.kubernetes.io/name="+sel, ""); got < n {
				why = fmt.Sprintf("%d %s pods Ready, want %d", got, sel, n)
				return false
			}
		}
		return true
	}
	var last string
	waitFor(t, 12*time.Minute, "every tlb pod runs "+image+" and is Ready", func() bool {
		if ok() {
			return true
		}
		if why != last {
			t.Logf("not yet rolled to %s: %s", image, why)
			last = why
		}
		return false
	})
}

// waitServing waits until the gateway's l7 serves its Envoy's stream, the
// director says the Gateway's VIP is up, and the router has the pool from
// the director.
func waitServing(t *testing.T, d *dc, gatewayAddr string) {
	t.Helper()
	gw := d.gateways[0]
	l7Metrics := "http://" + net.JoinHostPort(d.gatewayAddr[0], "9480") + "/metrics"
	envoyStats := "http://" + net.JoinHostPort(d.gatewayAddr[0], "9902") + "/stats/prometheus"
	waitFor(t, 5*time.Minute, "l7 serves Envoy's stream on "+gw.Name+" and the director says "+gatewayAddr+" is up", func() bool {
		if !servesEnvoy(scrape(gw.HTTPClient(), l7Metrics)) || !metricIs(scrape(gw.HTTPClient(), envoyStats), "envoy_control_plane_connected_state", "1") {
			return false
		}
		hc := d.director.HTTPClient()
		hc.Timeout = 5 * time.Second
		resp, err := hc.Get("http://198.18.1.2:9100/vip/" + gatewayAddr)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	bctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, _, err := d.bird.WaitRoutes(bctx, examplePool, 3*time.Minute, func(rs []birdlab.Route) bool {
		return len(rs) == 1 && rs[0].NextHop == "198.18.1.2"
	}); err != nil {
		t.Fatalf("the router has %s from the director: %v", examplePool, err)
	}
}

// importPrevious imports the release's image into every node's containerd
// in the background; the function it returns waits for the imports and
// says whether each node holds the image.
func importPrevious(nodes []*k8snode.Node, prev previousRelease) func() error {
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
			defer cancel()
			if err := n.ImportImage(ctx, prev.imageTar); err != nil {
				errs <- fmt.Errorf("node %s: import %s: %w", n.Name, prev.imageTar, err)
				return
			}
			imgs, err := n.Images(ctx)
			if err == nil && !contains(imgs, prev.image()) {
				err = fmt.Errorf("node %s: containerd holds %v after the import, want %s", n.Name, imgs, prev.image())
			}
			errs <- err
		}()
	}
	return sync.OnceValue(func() error {
		var all []error
		for range nodes {
			if err := <-errs; err != nil {
				all = append(all, err)
			}
		}
		return errors.Join(all...)
	})
}
