//go:build k8s

package k8s

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// kustomizeBuild is what the real kustomize builds from one kustomization
// under deploy/, as `kubectl apply -k` would apply it.
type kustomizeBuild struct {
	// dir is the kustomization's directory relative to the repository
	// ("deploy", "deploy/netd", ...).
	dir  string
	objs []*unstructured.Unstructured
}

// kustomizeBinary returns the kustomize that tools/k8s-test.sh built
// (TLB_KUSTOMIZE), or builds it from tools/go.mod when the variable is unset,
// as TestMain does for the ipam binary.
func kustomizeBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("TLB_KUSTOMIZE"); bin != "" {
		return bin
	}
	bin := filepath.Join(server.Dir, "kustomize")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "build", "-modfile=tools/go.mod", "-o", bin, "sigs.k8s.io/kustomize/kustomize/v5")
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("TLB_KUSTOMIZE is unset and building kustomize from tools/go.mod failed "+
			"(tools/k8s-test.sh builds it and sets TLB_KUSTOMIZE): %v\n%s", err, out)
	}
	return bin
}

// isComponent says whether dir/kustomization.yaml is a kustomize
// Component (deploy/site, deploy/envoy): not built alone, only as part of
// the kustomizations that include it.
func isComponent(dir string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return false, err
	}
	var k struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return false, fmt.Errorf("parse %s/kustomization.yaml: %w", dir, err)
	}
	return k.Kind == "Component", nil
}

// kustomizationDirs returns every directory under root that holds a
// kustomization.yaml (components too), relative to root, in lexical
// order (WalkDir's).
func kustomizationDirs(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "kustomization.yaml" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		dirs = append(dirs, rel)
		return nil
	})
	return dirs, err
}

// buildDeploy builds every kustomization under deploy/ but the components
// with the real kustomize, failing the test with the directory and kustomize's own error
// when one does not build.
func buildDeploy(t *testing.T) []kustomizeBuild {
	t.Helper()
	bin := kustomizeBinary(t)
	root := filepath.Join(repoRoot(), "deploy")
	dirs, err := kustomizationDirs(root)
	if err != nil {
		t.Fatalf("find kustomizations under deploy/: %v", err)
	}
	for _, want := range []string{".", "crds", "director", "netd", "envoy", "site", "examples/group-edge"} {
		if !slices.Contains(dirs, want) {
			t.Fatalf("no kustomization.yaml in deploy/%s (found %v)", want, dirs)
		}
	}
	out := t.TempDir()
	var builds []kustomizeBuild
	for i, dir := range dirs {
		rel := filepath.Join("deploy", dir)
		component, err := isComponent(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		if component {
			continue
		}
		file := filepath.Join(out, fmt.Sprintf("%d.yaml", i))
		cmd := exec.Command(bin, "build", "-o", file, filepath.Join(root, dir))
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("kustomize build %s: %v\n%s", rel, err, msg)
			continue
		}
		objs, err := apiserver.ReadManifests(file)
		if err != nil {
			t.Errorf("kustomize build %s: %v", rel, err)
			continue
		}
		if len(objs) == 0 {
			t.Errorf("kustomize build %s: no objects", rel)
		}
		builds = append(builds, kustomizeBuild{dir: rel, objs: objs})
	}
	if t.Failed() {
		t.FailNow()
	}
	return builds
}

// kustomizationFiles returns the files that dir/kustomization.yaml names
// directly: its file resources, its patch files and its configMapGenerator
// files. It is not
// a builder (kustomize builds); it only lets the tests say which YAML files
// under deploy/ no kustomization uses. A file named only through a field
// not read here shows up as unused, so the test errs on the loud side.
func kustomizationFiles(dir string) ([]string, error) {
	kpath := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(kpath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", kpath, err)
	}
	var k struct {
		Resources []string `json:"resources"`
		Patches   []struct {
			Path string `json:"path"`
		} `json:"patches"`
		ConfigMapGenerator []struct {
			Files []string `json:"files"`
		} `json:"configMapGenerator"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("parse %s: %w", kpath, err)
	}
	files := []string{kpath}
	for _, r := range k.Resources {
		files = append(files, filepath.Join(dir, r))
	}
	for _, p := range k.Patches {
		if p.Path != "" {
			files = append(files, filepath.Join(dir, p.Path))
		}
	}
	for _, g := range k.ConfigMapGenerator {
		for _, f := range g.Files {
			if _, path, ok := strings.Cut(f, "="); ok {
				f = path
			}
			files = append(files, filepath.Join(dir, f))
		}
	}
	return files, nil
}

// objectKey names an object of a build: kind, namespace and name.
func objectKey(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// configMapRefs returns the names of the ConfigMaps that the pod template
// of a workload (DaemonSet, Deployment, ...) mounts or reads.
func configMapRefs(o *unstructured.Unstructured) []string {
	pod, ok, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
	if !ok {
		return nil
	}
	var names []string
	add := func(m map[string]any, fields ...string) {
		if n, ok, _ := unstructured.NestedString(m, fields...); ok {
			names = append(names, n)
		}
	}
	vols, _, _ := unstructured.NestedSlice(pod, "volumes")
	for _, v := range mapsOf(vols) {
		add(v, "configMap", "name")
		srcs, _, _ := unstructured.NestedSlice(v, "projected", "sources")
		for _, s := range mapsOf(srcs) {
			add(s, "configMap", "name")
		}
	}
	for _, field := range []string{"initContainers", "containers"} {
		cs, _, _ := unstructured.NestedSlice(pod, field)
		for _, c := range mapsOf(cs) {
			from, _, _ := unstructured.NestedSlice(c, "envFrom")
			for _, f := range mapsOf(from) {
				add(f, "configMapRef", "name")
			}
			env, _, _ := unstructured.NestedSlice(c, "env")
			for _, e := range mapsOf(env) {
				add(e, "valueFrom", "configMapKeyRef", "name")
			}
		}
	}
	return names
}

// mapsOf returns the objects of a list decoded from YAML.
func mapsOf(s []any) []map[string]any {
	var out []map[string]any
	for _, v := range s {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// clusterConfigMaps are ConfigMaps that Kubernetes itself creates in every
// namespace, so no build needs to hold them.
var clusterConfigMaps = map[string]bool{"kube-root-ca.crt": true}

// generatedName matches a configMapGenerator's name with the content hash
// that kustomize appends.
var generatedName = regexp.MustCompile(`^(.+)-[a-z0-9]{10}$`)

// TestKustomizeConfigMapReferences: in every build under deploy/, each
// ConfigMap a workload mounts or reads is in that same build, in the
// workload's namespace (kube-root-ca.crt aside), and the workloads name the
// generated ConfigMaps by the hashed names kustomize gives them.
func TestKustomizeConfigMapReferences(t *testing.T) {
	builds := buildDeploy(t)
	for _, b := range builds {
		have := map[string]bool{}
		for _, o := range b.objs {
			if o.GetKind() == "ConfigMap" {
				have[o.GetNamespace()+"/"+o.GetName()] = true
			}
		}
		for _, o := range b.objs {
			for _, ref := range configMapRefs(o) {
				if clusterConfigMaps[ref] {
					continue
				}
				if !have[o.GetNamespace()+"/"+ref] {
					t.Errorf("%s: %s %s/%s uses ConfigMap %q, which is not in this build in namespace %q (ConfigMaps in it: %v)",
						b.dir, o.GetKind(), o.GetNamespace(), o.GetName(), ref, o.GetNamespace(), slices.Sorted(maps.Keys(have)))
				}
			}
		}
	}

	// The generated ConfigMaps, named through their hash in every build that
	// holds the workload.
	want := []struct {
		name, kind, workload, generator string
	}{
		{"netd config", "DaemonSet", "tlb-netd", "tlb-netd-config"},
		{"director config", "DaemonSet", "tlb-director", "tlb-director-config"},
	}
	for _, w := range want {
		t.Run(w.name, func(t *testing.T) {
			found := 0
			for _, b := range builds {
				for _, o := range b.objs {
					if o.GetKind() != w.kind || o.GetName() != w.workload {
						continue
					}
					found++
					var hashed []string
					for _, ref := range configMapRefs(o) {
						if ref == w.generator {
							t.Errorf("%s: %s %s uses %q without kustomize's hash suffix", b.dir, w.kind, w.workload, ref)
						}
						if m := generatedName.FindStringSubmatch(ref); m != nil && m[1] == w.generator {
							hashed = append(hashed, ref)
						}
					}
					if len(hashed) != 1 {
						t.Errorf("%s: %s %s uses %v, want one ConfigMap %s-<hash>", b.dir, w.kind, w.workload, configMapRefs(o), w.generator)
					}
				}
			}
			// deploy/<component> and deploy/: at least two builds.
			if found < 2 {
				t.Errorf("%s %s is in %d builds under deploy/, want at least 2", w.kind, w.workload, found)
			}
		})
	}
}
