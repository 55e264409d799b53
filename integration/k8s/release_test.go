//go:build k8s

package k8s

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseManifests renders two releases with tools/release/render.sh
// (the real kustomize, made-up digests): every TLB image is pinned by its
// digest under the release's tag; a bad version or digest is refused; and
// between two releases that differ only in the tlb image, the l7
// DaemonSet changes while the Envoy DaemonSet is byte for byte the same
// (tools/release/restarts.sh says so): the upgrade replaces l7's pods and
// leaves every Envoy running.
func TestReleaseManifests(t *testing.T) {
	kustomize := os.Getenv("TLB_KUSTOMIZE")
	if kustomize == "" {
		t.Skip("TLB_KUSTOMIZE is not set: run through tools/k8s-test.sh")
	}
	dir := t.TempDir()
	digest := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	render := func(version, tlb, envoy string) (string, error) {
		out := filepath.Join(dir, version+"-"+tlb[7:9]+".yaml")
		cmd := exec.Command(filepath.Join(repoRoot(), "tools", "release", "render.sh"), version, tlb, envoy, out)
		cmd.Env = append(os.Environ(), "KUSTOMIZE="+kustomize)
		b, err := cmd.CombinedOutput()
		if err != nil {
			return string(b), err
		}
		m, err := os.ReadFile(out)
		return string(m), err
	}
	older, err := render("v0.2.0", digest("a"), digest("e"))
	if err != nil {
		t.Fatalf("render v0.2.0: %v\n%s", err, older)
	}
	newer, err := render("v0.2.1", digest("b"), digest("e"))
	if err != nil {
		t.Fatalf("render v0.2.1: %v\n%s", err, newer)
	}
	for _, line := range strings.Split(newer, "\n") {
		if !strings.Contains(line, "image: ghcr.io/tlbproject/") {
			continue
		}
		if !strings.Contains(line, "tlb:v0.2.1@"+digest("b")) && !strings.Contains(line, "@"+digest("e")) {
			t.Errorf("not pinned to the release's digests: %s", strings.TrimSpace(line))
		}
	}
	for name, args := range map[string][3]string{
		"version with a suffix": {"v0.2.1-rc.1", digest("b"), digest("e")},
		"no v":                  {"0.2.1", digest("b"), digest("e")},
		"short digest":          {"v0.2.1", "sha256:abc", digest("e")},
	} {
		if out, err := render(args[0], args[1], args[2]); err == nil {
			t.Errorf("%s: rendered %v", name, args)
		} else if !strings.Contains(out, "render:") {
			t.Errorf("%s: error does not say what is wrong: %s", name, out)
		}
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	restarts := filepath.Join(repoRoot(), "tools", "release", "restarts.sh")
	if out, err := exec.Command(restarts, write("old.yaml", older), write("new.yaml", newer)).CombinedOutput(); err != nil {
		t.Errorf("restarts.sh says the Envoy DaemonSets differ between two releases of one Envoy image: %v\n%s", err, out)
	}
	if daemonSet(t, older, "tlb-l7-default") == daemonSet(t, newer, "tlb-l7-default") {
		t.Error("the l7 DaemonSet is the same in both releases: an upgrade would not run the new l7")
	}
	// A new Envoy image is an Envoy restart, and said to be one.
	envoyChanged, err := render("v0.2.1", digest("b"), digest("f"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(restarts, write("old.yaml", older), write("envoy.yaml", envoyChanged)).CombinedOutput(); err == nil {
		t.Errorf("restarts.sh says nothing of a new Envoy image:\n%s", out)
	}
}

// daemonSet is the YAML document of DaemonSet name in a kustomize build.
func daemonSet(t *testing.T, build, name string) string {
	t.Helper()
	for _, doc := range strings.Split(build, "\n---\n") {
		if strings.Contains(doc, "kind: DaemonSet\n") && strings.Contains(doc, "\n  name: "+name+"\n") {
			return doc
		}
	}
	t.Fatalf("no DaemonSet %s in the build", name)
	return ""
}
