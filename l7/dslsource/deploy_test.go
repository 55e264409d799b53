package dslsource_test

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/dsl"
)

// TestDeployConfigParses: the example DSL shipped in deploy/ (the DSL
// ConfigMap of the second gateway group's example overlay) is valid.
func TestDeployConfigParses(t *testing.T) {
	const file = "../../deploy/examples/group-edge/dsl.yaml"
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(b, &cm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(cm.Data) == 0 {
		t.Fatalf("%s: no DSL files", file)
	}
	for name, content := range cm.Data {
		if _, err := dsl.Parse(name, []byte(content)); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}
