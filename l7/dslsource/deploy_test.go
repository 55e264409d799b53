package dslsource_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlbproject/tlb/l7/dsl"
)

// TestDeployConfigParses: the example DSL shipped in deploy/ is valid.
func TestDeployConfigParses(t *testing.T) {
	files, _ := filepath.Glob("../../deploy/envoy/config/*.yaml")
	if len(files) == 0 {
		t.Fatal("no deploy config files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dsl.Parse(filepath.Base(f), b); err != nil {
			t.Errorf("%v", err)
		}
	}
}
