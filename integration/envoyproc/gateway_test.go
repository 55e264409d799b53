package envoyproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	osexec "os/exec"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/bootstrap"
)

// TestManifestSpec reads deploy/envoy as the lab starts it: Envoy is the
// container's command (so it keeps its binary's capability), the drain is
// the preStop hook, the pod runs as 101 and Envoy adds NET_BIND_SERVICE
// only.
func TestManifestSpec(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSpec(filepath.Join(root, "deploy", "envoy", "gateway.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Envoy[0] != "/usr/local/bin/envoy" {
		t.Errorf("envoy container command starts with %q, want Envoy itself", s.Envoy[0])
	}
	if s.PreStop[0] != "/run/tlb/l7" || s.PreStop[1] != "drain" {
		t.Errorf("preStop = %q, want l7 drain", s.PreStop)
	}
	if s.UID != 101 || s.GID != 101 {
		t.Errorf("pod user %d:%d, want 101:101", s.UID, s.GID)
	}
	if fmt.Sprint(s.EnvoyCaps) != "[NET_BIND_SERVICE]" {
		t.Errorf("envoy adds capabilities %v, want NET_BIND_SERVICE only", s.EnvoyCaps)
	}
}

// TestEnvoyVersionPinnedOnce holds the three places that name the Envoy
// release together: the constant, tools/deps.sh and deploy/envoy's image.
func TestEnvoyVersionPinnedOnce(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	deps, err := os.ReadFile(filepath.Join(root, "tools", "deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^ENVOY_VERSION=(\S+)$`).FindSubmatch(deps); m == nil || string(m[1]) != bootstrap.EnvoyVersion {
		t.Errorf("tools/deps.sh fetches Envoy %q, bootstrap.EnvoyVersion is %s", m, bootstrap.EnvoyVersion)
	}
	gw, err := os.ReadFile(filepath.Join(root, "deploy", "envoy", "gateway.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "image: ghcr.io/tlbproject/envoy:v" + bootstrap.EnvoyVersion + "\n"; !strings.Contains(string(gw), want) {
		t.Errorf("deploy/envoy/gateway.yaml does not run %q", strings.TrimSpace(want))
	}
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := run(bin, "--version")
	if err != nil || !strings.Contains(out, "/"+bootstrap.EnvoyVersion+"/") {
		t.Errorf("%s --version: %q %v", bin, out, err)
	}
}

// TestRequestThroughEnvoyThenDrain is the harness's own proof: a DSL
// service on a listener of a loopback address, a request through the real
// Envoy to a backend, then the preStop drain fails Envoy's readiness on the
// stats listener (what the directors probe).
func TestRequestThroughEnvoyThenDrain(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, "backend saw host %s path %s", r.Host, r.URL.Path)
	}))
	defer backend.Close()
	vip, host := "127.0.10.1", "127.0.10.2"
	cfg, port := HelloDSL(t, vip, backend.Listener.Addr().String())
	dir := shortDir(t)
	g, err := Start(Options{Group: "edge", Dir: filepath.Join(dir, "gw"), Serve: []string{"--config=" + cfg}, HostIP: host})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := g.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s:%d/hi", vip, port), nil)
	req.Host = "hello.example.com"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "backend saw host hello.example.com path /hi" {
		t.Fatalf("through envoy: %d %q", resp.StatusCode, body)
	}
	if code := statsReady(t, g); code != 200 {
		t.Fatalf("stats listener /ready before the drain: %d", code)
	}
	// The drain waits for client connections to close: this client's
	// kept-alive one would hold it until Envoy's drain time.
	http.DefaultClient.CloseIdleConnections()
	if err := g.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if code := statsReady(t, g); code != 503 {
		t.Fatalf("stats listener /ready after the drain: %d, want 503", code)
	}
}

func statsReady(t *testing.T, g *Gateway) int {
	t.Helper()
	resp, err := http.Get("http://" + g.StatsAddr + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "eg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

func run(name string, args ...string) (string, error) {
	out, err := osexec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// TestEnvoyPodNamesNothingOfARelease: the Envoy DaemonSet of
// deploy/envoy/gateway.yaml names only the Envoy image and no generated
// ConfigMap or Secret, so nothing a TLB release changes (the tlb image's
// tag or digest, the DSL ConfigMap's hash) changes its pod template: an
// upgrade rolls the l7 pods and leaves Envoy's running (docs/upgrading.md).
func TestEnvoyPodNamesNothingOfARelease(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "envoy", "gateway.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var ds appsv1.DaemonSet
		if err := yaml.UnmarshalStrict([]byte(doc), &ds); err != nil {
			t.Fatal(err)
		}
		pod := ds.Spec.Template.Spec
		if !slices.ContainsFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == "envoy" }) {
			continue
		}
		found++
		for _, c := range append(pod.InitContainers, pod.Containers...) {
			if !strings.HasPrefix(c.Image, "ghcr.io/tlbproject/envoy:") {
				t.Errorf("%s: container %s runs %s, not the Envoy image", ds.Name, c.Name, c.Image)
			}
		}
		for _, v := range pod.Volumes {
			if v.HostPath == nil && v.EmptyDir == nil {
				t.Errorf("%s: volume %s is neither a hostPath nor an emptyDir: %+v", ds.Name, v.Name, v.VolumeSource)
			}
		}
		if pod.ServiceAccountName != "" || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			t.Errorf("%s: Envoy's pod must hold no Kubernetes token (ServiceAccount %q)", ds.Name, pod.ServiceAccountName)
		}
	}
	if found != 1 {
		t.Fatalf("%d DaemonSets with an envoy container, want 1", found)
	}
}
