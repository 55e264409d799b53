//go:build lab

package e2e_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/integration/k8snode"
	"github.com/tlbproject/tlb/integration/loadloop"
)

// upgradeFieldManager is the field manager of the upgrade's applies, as
// kubectl apply --server-side names its own.
const upgradeFieldManager = "tlb-upgrade-lab"

// previousRelease is what tools/lab-test.sh hands the upgrade test
// (tools/release/previous.sh): the newest release of deploy/releases, its
// manifests, and its tlb image built again from the commit they name
// (the lab has no registry to pull the released one from).
type previousRelease struct {
	version, manifests, imageTar string
}

func previousFromEnv(t *testing.T) previousRelease {
	t.Helper()
	p := previousRelease{version: os.Getenv("TLB_PREVIOUS_VERSION"), manifests: os.Getenv("TLB_PREVIOUS_MANIFESTS"), imageTar: os.Getenv("TLB_PREVIOUS_IMAGE_TAR")}
	if p.version == "" || p.manifests == "" || p.imageTar == "" {
		t.Fatal("TLB_PREVIOUS_VERSION, TLB_PREVIOUS_MANIFESTS and TLB_PREVIOUS_IMAGE_TAR must be set: run through tools/lab-test.sh")
	}
	return p
}

// releaseDigest is a TLB image reference pinned by digest in a release's
// manifests: the lab's nodes hold that release's image by its tag only
// (built again for amd64, so its index is not the released
// multi-architecture one), so the test names it by tag.
var releaseDigest = regexp.MustCompile(`(image: ghcr\.io/tlbproject/(?:tlb|envoy):v[0-9]+\.[0-9]+\.[0-9]+)@sha256:[0-9a-f]{64}`)

// releaseObjects reads the previous release's manifests as a site applies
// them: the site's BGP peer (siteEdit) and graceful restart
// (gracefulRestartEdit) in its director ConfigMap, images by tag.
func releaseObjects(t *testing.T, p previousRelease) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(p.manifests)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.HasPrefix(text, "# TLB "+p.version+":") {
		t.Fatalf("%s does not begin with the header of release %s", p.manifests, p.version)
	}
	text = gracefulRestartEdit(t, p.manifests, siteEdit(t, p.manifests, text))
	if n := len(releaseDigest.FindAllString(text, -1)); n == 0 {
		t.Fatalf("%s pins no TLB image by digest", p.manifests)
	}
	return readManifestText(t, releaseDigest.ReplaceAllString(text, "$1"))
}

// gracefulRestartEdit turns on BGP graceful restart in the site's director
// file, as docs/upgrading.md asks of an L4 cluster with one director (the
// lab's): the stopping director leaves its routes at the router and IPVS
// forwarding until the new one has announced.
func gracefulRestartEdit(t *testing.T, what, text string) string {
	t.Helper()
	line := regexp.MustCompile(`(?m)^( *)(allowedPrefixes: \[203\.0\.113\.0/24\])$`)
	if len(line.FindAllString(text, -1)) != 1 {
		t.Fatalf("%s no longer has the one bgp.allowedPrefixes line the upgrade test adds gracefulRestart after", what)
	}
	return line.ReplaceAllString(text, "${1}${2}\n${1}gracefulRestart: true")
}

// rollOrder is the order in which the upgrade applies the workloads, each
// once the one before has rolled out: the controllers first, then the
// node agents, the director last; the lab's two emulated CPUs cannot
// replace them all at once (docs/upgrading.md). Workloads not named here
// (Envoy's DaemonSet, Redis, the rate limit service) follow.
var rollOrder = []string{"tlb-ipam", "tlb-gateway-controller", "tlb-netd", "tlb-l7-default", "tlb-director"}

// workload is a Deployment or DaemonSet of tlb-system among the objects
// applied.
func workload(o *unstructured.Unstructured) bool {
	return o.GetNamespace() == "tlb-system" && (o.GetKind() == "Deployment" || o.GetKind() == "DaemonSet")
}

// inLab reports whether every image of a workload's pod template (its
// containers and init containers) is one of ours, which the lab's nodes
// hold; Redis and the rate limit service are pulled from registries the
// lab cannot reach, so their pods never run there.
func inLab(o *unstructured.Unstructured) bool {
	for _, field := range []string{"containers", "initContainers"} {
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", field)
		for _, c := range cs {
			if m, ok := c.(map[string]any); !ok || !strings.HasPrefix(fmt.Sprint(m["image"]), "ghcr.io/tlbproject/") {
				return false
			}
		}
	}
	return true
}

// applyInTurn applies objs as an upgrade to them: everything but the
// workloads at once, then each workload in rollOrder, waiting until one
// the lab can run has rolled out to image before the next. A workload the apply
// does not change (same generation) is not waited for. It returns, per
// workload, how long its rollout took, and fails the test if the apply
// changed Envoy's DaemonSet (tlb-gateway-*), which would restart Envoy.
func applyInTurn(t *testing.T, s *apiserver.Server, kc kubernetes.Interface, image string, objs []*unstructured.Unstructured, check func()) []string {
	t.Helper()
	ctx := context.Background()
	var rest []*unstructured.Unstructured
	loads := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if workload(o) {
			loads[o.GetName()] = o
		} else {
			rest = append(rest, o)
		}
	}
	if err := s.ApplyAll(ctx, upgradeFieldManager, rest); err != nil {
		t.Fatal(err)
	}
	order := append([]string(nil), rollOrder...)
	for name := range loads {
		if !contains(order, name) {
			order = append(order, name)
		}
	}
	var took []string
	for _, name := range order {
		o := loads[name]
		if o == nil {
			t.Fatalf("the manifests have no workload %s", name)
		}
		before := generation(t, kc, o)
		began := time.Now()
		if err := s.ApplyAll(ctx, upgradeFieldManager, []*unstructured.Unstructured{o}); err != nil {
			t.Fatal(err)
		}
		after := generation(t, kc, o)
		switch {
		case after == before:
			took = append(took, name+" unchanged")
			continue
		case strings.HasPrefix(name, "tlb-gateway-") && o.GetKind() == "DaemonSet":
			t.Fatalf("the apply changed Envoy's DaemonSet %s (generation %d -> %d): every Envoy restarts", name, before, after)
		case !inLab(o):
			// The rate limit service (its tlb sidecar changed): its pods
			// never run in the lab.
			took = append(took, name+" changed, not waited for (its images are not in the lab)")
			continue
		}
		waitFor(t, 15*time.Minute, o.GetKind()+" "+name+" rolls out to "+image, func() bool {
			check()
			return rolledOut(kc, o)
		})
		took = append(took, fmt.Sprintf("%s %s", name, since(began)))
		t.Logf("%s %s rolled out to %s in %s", o.GetKind(), name, image, since(began))
	}
	return took
}

// generation is the generation of workload o as the API server has it.
func generation(t *testing.T, kc kubernetes.Interface, o *unstructured.Unstructured) int64 {
	t.Helper()
	var m metav1.Object
	var err error
	switch o.GetKind() {
	case "Deployment":
		m, err = kc.AppsV1().Deployments(o.GetNamespace()).Get(context.Background(), o.GetName(), metav1.GetOptions{})
	default:
		m, err = kc.AppsV1().DaemonSets(o.GetNamespace()).Get(context.Background(), o.GetName(), metav1.GetOptions{})
	}
	if err != nil {
		t.Fatalf("read %s %s: %v", o.GetKind(), o.GetName(), err)
	}
	return m.GetGeneration()
}

// rolledOut reports whether workload o's controller has seen its newest
// generation and every one of its pods is of that generation and
// available, with no old pod left, as kubectl rollout status waits for.
func rolledOut(kc kubernetes.Interface, o *unstructured.Unstructured) bool {
	ctx := context.Background()
	if o.GetKind() == "Deployment" {
		d, err := kc.AppsV1().Deployments(o.GetNamespace()).Get(ctx, o.GetName(), metav1.GetOptions{})
		if err != nil || d.Status.ObservedGeneration < d.Generation || d.Spec.Replicas == nil {
			return false
		}
		want := *d.Spec.Replicas
		return d.Status.UpdatedReplicas == want && d.Status.Replicas == want && d.Status.AvailableReplicas == want
	}
	ds, err := kc.AppsV1().DaemonSets(o.GetNamespace()).Get(ctx, o.GetName(), metav1.GetOptions{})
	if err != nil || ds.Status.ObservedGeneration < ds.Generation {
		return false
	}
	want := ds.Status.DesiredNumberScheduled
	return want > 0 && ds.Status.UpdatedNumberScheduled == want && ds.Status.NumberAvailable == want && ds.Status.NumberUnavailable == 0
}

// podImages checks that every container of our workloads' pods (but
// Envoy's and those still stopping) runs image.
func podImages(t *testing.T, kc kubernetes.Interface, image string) {
	t.Helper()
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name in (tlb-ipam,tlb-gateway-controller,tlb-netd,tlb-l7,tlb-director)"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatal("no pods of the tlb workloads")
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue // an old pod still stopping
		}
		for _, c := range p.Spec.Containers {
			if c.Image != image {
				t.Errorf("pod %s container %s runs %s; want %s", p.Name, c.Name, c.Image, image)
			}
		}
	}
}

// envoyState is what says that Envoy was not restarted: its pod, its
// container and the process in it, and how long Envoy has run.
type envoyState struct {
	pod       string
	uid       string
	container string
	restarts  int32
	pid       int
}

func readEnvoy(t *testing.T, kc kubernetes.Interface, node *k8snode.Node) envoyState {
	t.Helper()
	pods, err := kc.CoreV1().Pods("tlb-system").List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=tlb-gateway"})
	if err != nil {
		t.Fatal(err)
	}
	var found []corev1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName == node.Name {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d Envoy pods on %s; want 1", len(found), node.Name)
	}
	p := found[0]
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != "envoy" {
			continue
		}
		pid, err := node.ContainerPID(context.Background(), cs.ContainerID)
		if err != nil {
			t.Fatal(err)
		}
		return envoyState{pod: p.Name, uid: string(p.UID), container: cs.ContainerID, restarts: cs.RestartCount, pid: pid}
	}
	t.Fatalf("Envoy pod %s on %s has no envoy container status", p.Name, node.Name)
	return envoyState{}
}

// envoyUptime is Envoy's server.uptime, read from the stats listener
// deploy/envoy opens on the gateway node's :9902 (GET /stats/prometheus
// and /ready only).
func envoyUptime(t *testing.T, d *dc) time.Duration {
	t.Helper()
	hc := d.gateways[0].HTTPClient()
	hc.Timeout = 30 * time.Second
	resp, err := hc.Get("http://" + d.gatewayAddr[0] + ":9902/stats/prometheus")
	if err != nil {
		t.Fatalf("read Envoy's stats: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read Envoy's stats: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(f[0], "envoy_server_uptime") {
			secs, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatalf("Envoy's %q: %v", line, err)
			}
			return time.Duration(secs) * time.Second
		}
	}
	t.Fatalf("no envoy_server_uptime in Envoy's /stats/prometheus (status %d, %d bytes)", resp.StatusCode, len(b))
	return 0
}

// upgradeFromPrevious is the upgrade docs/upgrading.md describes, on the
// installation TestDeployOnRealNodes made: the installation first becomes
// the previous release (its manifests, applied as a site would, its image
// built again from its commit), then, under HTTP load on the example
// Service's VIP and HTTPS load on the example Gateway's (new connections
// through the director and Envoy, paced so as to leave the emulated CPUs
// room for the rollouts), this tree's manifests are applied workload by
// workload. No request may fail, and Envoy keeps its pod, container and
// process: a release that changes TLB code only restarts no Envoy.
func upgradeFromPrevious(t *testing.T, s *apiserver.Server, kc kubernetes.Interface, d *dc, nodes []*k8snode.Node, roots *x509.CertPool, serviceVIP, gatewayAddr, kustomize string, check func()) {
	t.Helper()
	p := previousFromEnv(t)
	previousImage := "ghcr.io/tlbproject/tlb:" + p.version
	release := releaseObjects(t, p)
	tree := buildInstall(t, kustomize, gracefulRestartEdit)
	began := time.Now()
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			if err := n.ImportImage(ctx, p.imageTar); err != nil {
				errs <- fmt.Errorf("node %s: %w", n.Name, err)
				return
			}
			errs <- nil
		}()
	}
	for range nodes {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%s imported into both nodes in %s", previousImage, since(began))
	gwNode := nodes[1]
	envoy := readEnvoy(t, kc, gwNode)

	// The installation becomes the previous release; no load yet: this is
	// the starting point, not what is measured.
	down := time.Now()
	took := applyInTurn(t, s, kc, previousImage, release, check)
	podImages(t, kc, previousImage)
	t.Logf("FIGURE upgrade_to_previous: this tree's installation became %s in %s (%s)", p.version, since(down), strings.Join(took, ", "))
	if got := readEnvoy(t, kc, gwNode); got != envoy {
		t.Fatalf("Envoy changed while the installation became %s: %+v, was %+v", p.version, got, envoy)
	}

	// The load: each request a new connection, through the director and
	// Envoy; HTTP on the Service's VIP, HTTPS (certificate checked) on
	// the Gateway's.
	paced := func(every time.Duration, get func() (int, string, error), want string) *loadloop.Loop {
		tick := time.NewTicker(every)
		t.Cleanup(tick.Stop)
		return loadloop.Start(func() error {
			<-tick.C
			code, body, err := get()
			if err != nil {
				return err
			}
			if code != http.StatusOK || body != want {
				return fmt.Errorf("answer %d %q; want 200 %q", code, body, want)
			}
			return nil
		})
	}
	plain := paced(200*time.Millisecond, func() (int, string, error) {
		return getThrough(d.client, nil, serviceVIP, "http://"+exampleHost+"/upgrade")
	}, "backend host="+exampleHost+" proto=http path=/upgrade")
	defer plain.Stop()
	secure := paced(500*time.Millisecond, func() (int, string, error) {
		return getThrough(d.client, roots, gatewayAddr, "https://"+gatewayExampleHost+"/upgrade")
	}, "backend host="+gatewayExampleHost+" proto=https path=/upgrade")
	defer secure.Stop()
	waitFor(t, 2*time.Minute, "both loads have sent requests before the upgrade", func() bool {
		return plain.Sent() >= 5 && secure.Sent() >= 5
	})

	up := time.Now()
	took = applyInTurn(t, s, kc, tlbImage, tree, check)
	upgraded := since(up)
	podImages(t, kc, tlbImage)
	// Requests after the last rollout too: the new pods serve.
	plainEnd, secureEnd := plain.Sent(), secure.Sent()
	waitFor(t, 2*time.Minute, "both loads send 10 more requests after the upgrade", func() bool {
		return plain.Sent() >= plainEnd+10 && secure.Sent() >= secureEnd+10
	})
	plain.Stop()
	secure.Stop()
	t.Logf("FIGURE upgrade_from_previous: %s to this tree in %s under load (%s)", p.version, upgraded, strings.Join(took, ", "))
	for _, l := range []struct {
		name string
		loop *loadloop.Loop
	}{{"HTTP " + serviceVIP + ":80", plain}, {"HTTPS " + gatewayAddr + ":443", secure}} {
		sent, failures := l.loop.Counts()
		t.Logf("FIGURE upgrade_requests: %s: %d requests, %d failed", l.name, sent, len(failures))
		if len(failures) > 0 {
			t.Errorf("%s: %d of %d requests failed during the upgrade; the first: %s", l.name, len(failures), sent, strings.Join(failures[:min(len(failures), 5)], "; "))
		}
	}
	if got := readEnvoy(t, kc, gwNode); got != envoy {
		t.Errorf("Envoy changed in the upgrade: %+v, was %+v; want the same pod, container and process", got, envoy)
	}
	if uptime, ran := envoyUptime(t, d), time.Since(began); uptime < ran.Truncate(time.Second) {
		t.Errorf("Envoy's server.uptime is %s; it has run since before the upgrade began %s ago (a restarted Envoy)", uptime, ran)
	}
}
