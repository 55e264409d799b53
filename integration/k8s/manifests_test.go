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
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/ipam/api/v1alpha1"
)

// TestManifestsAcceptedByAPIServer: proof 5. Every manifest under deploy/
// (CRDs, RBAC, workloads, examples, and deploy/envoy) is accepted by the
// real API server in a server-side dry-run apply, and every kustomization
// names files and directories that exist.
func TestManifestsAcceptedByAPIServer(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)
	disc, err := discovery.NewDiscoveryClientForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))

	// What kustomize would build from the top overlay, plus the examples;
	// every YAML file under deploy/ must be one or the other.
	root := filepath.Join(repoRoot(), "deploy")
	used := map[string]bool{}
	objs, err := buildKustomization(root, filepath.Join(root, "overlays", "all"), used)
	if err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	for _, f := range examples {
		docs, err := apiserver.ReadManifests(f)
		if err != nil {
			t.Fatal(err)
		}
		used[f] = true
		rel, _ := filepath.Rel(root, f)
		for _, o := range docs {
			objs = append(objs, built{obj: o, from: rel})
		}
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) && !used[p] {
			t.Errorf("%s is neither built by deploy/overlays/all nor an example", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Namespaces are created for real first: namespaced objects cannot even
	// be dry-run into a namespace that does not exist.
	for _, b := range objs {
		if b.obj.GetKind() == "Namespace" {
			ensureNamespace(t, kc, b.obj.GetName())
		}
		for _, ns := range []string{b.obj.GetNamespace(), b.namespace} {
			if ns != "" {
				ensureNamespace(t, kc, ns)
			}
		}
	}
	if len(objs) < 10 {
		t.Fatalf("found only %d objects under deploy/", len(objs))
	}
	kinds := map[string]int{}
	for _, b := range objs {
		o := b.obj
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("%s: %s %s: no such resource on the API server: %v", b.from, gvk, o.GetName(), err)
			continue
		}
		ri := dc.Resource(m.Resource)
		var res interface {
			Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error)
		} = ri
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := o.GetNamespace()
			if b.namespace != "" {
				ns = b.namespace
			}
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
			t.Errorf("%s: %s %s rejected: %v", b.from, gvk.Kind, o.GetName(), err)
			continue
		}
		kinds[gvk.Kind]++
	}
	t.Logf("accepted by server-side dry run: %v", kinds)
	for _, k := range []string{"CustomResourceDefinition", "Deployment", "DaemonSet", "ClusterRole", "VIPPool", "L4Cluster", "Service"} {
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
