package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// gatewayCopyLimit is the sizeLimit of the emptyDir tlb-bin that the
// gateway pod's init container copies l7 into (deploy/envoy/gateway.yaml):
// the kubelet evicts the pod when what it holds exceeds that.
func gatewayCopyLimit(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "envoy", "gateway.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ds struct {
		Spec struct {
			Template struct {
				Spec struct {
					Volumes []struct {
						Name     string `json:"name"`
						EmptyDir *struct {
							SizeLimit string `json:"sizeLimit"`
						} `json:"emptyDir"`
					} `json:"volumes"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &ds); err != nil {
		t.Fatalf("deploy/envoy/gateway.yaml: %v", err)
	}
	for _, v := range ds.Spec.Template.Spec.Volumes {
		if v.Name == "tlb-bin" && v.EmptyDir != nil {
			n, err := parseBinarySize(v.EmptyDir.SizeLimit)
			if err != nil {
				t.Fatalf("deploy/envoy/gateway.yaml volume tlb-bin: %v", err)
			}
			return n
		}
	}
	t.Fatal("deploy/envoy/gateway.yaml has no emptyDir volume tlb-bin")
	return 0
}

// parseBinarySize reads a Kubernetes quantity with a binary suffix (Ki,
// Mi, Gi), the form the manifests use for sizes.
func parseBinarySize(q string) (int64, error) {
	for i, suffix := range []string{"Ki", "Mi", "Gi"} {
		if n, ok := strings.CutSuffix(q, suffix); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil || v <= 0 {
				break
			}
			return v << (10 * (i + 1)), nil
		}
	}
	return 0, fmt.Errorf("size %q: want a positive whole number of Ki, Mi or Gi", q)
}

func TestParseBinarySize(t *testing.T) {
	for in, want := range map[string]int64{"64Mi": 64 << 20, "1Gi": 1 << 30, "512Ki": 512 << 10, "64M": -1, "Mi": -1, "-1Mi": -1, "": -1} {
		got, err := parseBinarySize(in)
		if (want < 0) != (err != nil) || want >= 0 && got != want {
			t.Errorf("parseBinarySize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}
