//go:build k8s

package k8s

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// TestManifestsAcceptedByAPIServer: proof 5. Every kustomization under
// deploy/ (deploy/ itself, each part and the examples' overlays; not the
// components, which only build inside them) is built
// by the real kustomize, and every object of each build, and of
// deploy/examples, is accepted by the real API server in a server-side
// dry-run apply. Every YAML file under deploy/ is used: named by a
// kustomization (a resource or a configMapGenerator file) or an example.
func TestManifestsAcceptedByAPIServer(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)
	disc, err := discovery.NewDiscoveryClientForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))

	root := filepath.Join(repoRoot(), "deploy")
	builds := buildDeploy(t)
	used := map[string]bool{}
	dirs, err := kustomizationDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		files, err := kustomizationFiles(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			used[f] = true
		}
	}
	examples, _ := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	for _, f := range examples {
		objs, err := apiserver.ReadManifests(f)
		if err != nil {
			t.Fatal(err)
		}
		used[f] = true
		rel, _ := filepath.Rel(repoRoot(), f)
		builds = append(builds, kustomizeBuild{dir: rel, objs: objs})
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// deploy/releases holds the releases' rendered manifests, which
		// no kustomization names (TestReleaseManifests checks how they
		// are made).
		if d.IsDir() && p == filepath.Join(root, "releases") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) && !used[p] {
			t.Errorf("%s is named by no kustomization under deploy/ and is not an example", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Namespaces are created for real first: namespaced objects cannot even
	// be dry-run into a namespace that does not exist.
	for _, b := range builds {
		for _, o := range b.objs {
			if o.GetKind() == "Namespace" {
				ensureNamespace(t, kc, o.GetName())
			}
			if ns := o.GetNamespace(); ns != "" {
				ensureNamespace(t, kc, ns)
			}
		}
	}
	kinds := map[string]int{}
	for _, b := range builds {
		// kustomize puts CRDs first; the CRDs are also installed for real
		// by TestMain, so the custom resources of the examples resolve.
		for _, o := range b.objs {
			if dryRunApply(ctx, t, mapper, dc, b.dir, o) {
				kinds[o.GetKind()]++
			}
		}
	}
	t.Logf("accepted by server-side dry run: %v", kinds)
	for _, k := range []string{"CustomResourceDefinition", "Deployment", "DaemonSet", "ClusterRole", "VIPPool", "L4Cluster", "Service", "ConfigMap"} {
		if kinds[k] == 0 {
			t.Errorf("no %s among the accepted manifests", k)
		}
	}

	// The schema validates: an unmasked CIDR and a bad environment are
	// refused by the API server itself, naming the field.
	bad := map[string]string{
		"VIPPool":   `{"apiVersion":"tlb.io/v1alpha1","kind":"VIPPool","metadata":{"name":"bad"},"spec":{"l4Cluster":"x","cidrs":["203.0.113.7/24"]}}`,
		"L4Cluster": `{"apiVersion":"tlb.io/v1alpha1","kind":"L4Cluster","metadata":{"name":"bad"},"spec":{"environment":"Prod!"}}`,
	}
	for kind, body := range bad {
		gvr := v1alpha1.VIPPoolResource
		field := "spec.cidrs[0]"
		if kind == "L4Cluster" {
			gvr, field = v1alpha1.L4ClusterResource, "spec.environment"
		}
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(body), &u.Object); err != nil {
			t.Fatal(err)
		}
		_, err := dc.Resource(gvr).Create(ctx, &u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field) {
			t.Errorf("invalid %s: err = %v, want Invalid naming %s", kind, err, field)
		}
	}
}

// dryRunApply applies o in a server-side dry run, reporting a rejection
// with the build it came from, its kind and its name.
func dryRunApply(ctx context.Context, t *testing.T, mapper meta.RESTMapper, dc dynamic.Interface, from string, o *unstructured.Unstructured) bool {
	t.Helper()
	gvk := o.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && gvk.Group == "monitoring.coreos.com" {
		// deploy/monitoring's PrometheusRule needs the Prometheus
		// Operator's CRDs, which this API server does not have; promtool
		// checks its rules (make monitoring-test).
		t.Logf("%s: %s %s: skipped, no Prometheus Operator CRDs here", from, gvk, o.GetName())
		return false
	}
	if err != nil {
		t.Errorf("%s: %s %s: no such resource on the API server: %v", from, gvk, o.GetName(), err)
		return false
	}
	ri := dc.Resource(m.Resource)
	var res dynamic.ResourceInterface = ri
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := o.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		res = ri.Namespace(ns)
	}
	body, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	force := true
	_, err = res.Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		DryRun: []string{metav1.DryRunAll}, FieldManager: "tlb-manifest-test", Force: &force,
	})
	if err != nil {
		t.Errorf("%s: %s %s rejected: %v", from, gvk.Kind, o.GetName(), err)
		return false
	}
	return true
}
