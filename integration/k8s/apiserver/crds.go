package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ReadManifests decodes every YAML document of a file.
func ReadManifests(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifests: %w", err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// InstallCRDs creates every CRD in the YAML files of dir and of its
// subdirectories and waits until each is established. A dir without YAML files (a wrong path) is an
// error, not an empty install.
func InstallCRDs(ctx context.Context, cfg *rest.Config, dir string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build dynamic client: %w", err)
	}
	// deploy/crds keeps the Gateway API CRDs one level down
	// (gateway-api/, installed by a separate step in a real cluster).
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	nested, _ := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	files = append(files, nested...)
	installed := 0
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		installed++
		objs, err := ReadManifests(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := createOnce(ctx, dyn.Resource(crdResource), o, nil); err != nil {
				return fmt.Errorf("CRD from %s: %w", f, err)
			}
			for {
				got, err := dyn.Resource(crdResource).Get(ctx, o.GetName(), metav1.GetOptions{})
				if err == nil && established(got) {
					break
				}
				if ctx.Err() != nil {
					return fmt.Errorf("CRD %s not established: %w", o.GetName(), ctx.Err())
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	if installed == 0 {
		return fmt.Errorf("install CRDs: no CRD files (*.yaml) in %s", dir)
	}
	return nil
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
