//go:build k8s

package k8s

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// kustomization is the part of kustomize's format that deploy/ uses.
// Anything else in a kustomization.yaml is an error, so that the tests
// never silently check less than kustomize would build.
type kustomization struct {
	APIVersion         string               `json:"apiVersion"`
	Kind               string               `json:"kind"`
	Resources          []string             `json:"resources"`
	Namespace          string               `json:"namespace"`
	ConfigMapGenerator []configMapGenerator `json:"configMapGenerator"`
	GeneratorOptions   struct {
		Labels                map[string]string `json:"labels"`
		DisableNameSuffixHash bool              `json:"disableNameSuffixHash"`
	} `json:"generatorOptions"`
}

type configMapGenerator struct {
	Name     string   `json:"name"`
	Files    []string `json:"files"`
	Literals []string `json:"literals"`
}

// built is one object of a kustomize build and where it came from.
type built struct {
	obj *unstructured.Unstructured
	// from is the file, relative to deploy/.
	from string
	// namespace is the kustomization's namespace override ("" for none);
	// it applies when the resource is namespaced.
	namespace string
}

// buildKustomization reads dir/kustomization.yaml and its resources
// recursively, as kustomize would, recording every file it reads in used.
func buildKustomization(root, dir string, used map[string]bool) ([]built, error) {
	kpath := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(kpath)
	if err != nil {
		return nil, err
	}
	used[kpath] = true
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", kpath, err)
	}
	var out []built
	for _, r := range k.Resources {
		p := filepath.Join(dir, r)
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: resource %s: %w", kpath, r, err)
		}
		if st.IsDir() {
			sub, err := buildKustomization(root, p, used)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
			continue
		}
		objs, err := apiserver.ReadManifests(p)
		if err != nil {
			return nil, err
		}
		used[p] = true
		rel, _ := filepath.Rel(root, p)
		for _, o := range objs {
			out = append(out, built{obj: o, from: rel})
		}
	}
	for _, g := range k.ConfigMapGenerator {
		cm := map[string]any{}
		for _, f := range g.Files {
			key, path := filepath.Base(f), f
			if i := strings.Index(f, "="); i >= 0 {
				key, path = f[:i], f[i+1:]
			}
			p := filepath.Join(dir, path)
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("%s: configMapGenerator %s: %w", kpath, g.Name, err)
			}
			used[p] = true
			cm[key] = string(b)
		}
		for _, l := range g.Literals {
			kv := strings.SplitN(l, "=", 2)
			if len(kv) != 2 {
				return nil, fmt.Errorf("%s: configMapGenerator %s: literal %q is not key=value", kpath, g.Name, l)
			}
			cm[kv[0]] = kv[1]
		}
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": cm}}
		u.SetName(g.Name)
		u.SetLabels(k.GeneratorOptions.Labels)
		rel, _ := filepath.Rel(root, kpath)
		out = append(out, built{obj: u, from: rel + " (configMapGenerator " + g.Name + ")"})
	}
	if k.Namespace != "" {
		for i := range out {
			out[i].namespace = k.Namespace
		}
	}
	return out, nil
}
