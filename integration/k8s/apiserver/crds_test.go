package apiserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// TestInstallCRDsRefusesAnEmptyDir: a directory without CRD files (a
// wrong path, or only a kustomization) is an error naming it, before any
// request is made (the host below does not answer).
func TestInstallCRDsRefusesAnEmptyDir(t *testing.T) {
	onlyKustomization := t.TempDir()
	if err := os.WriteFile(filepath.Join(onlyKustomization, "kustomization.yaml"), []byte("resources: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{
		"missing":            filepath.Join(t.TempDir(), "no-such-dir"),
		"only kustomization": onlyKustomization,
	} {
		t.Run(name, func(t *testing.T) {
			err := InstallCRDs(context.Background(), &rest.Config{Host: "https://127.0.0.1:1"}, dir)
			if err == nil || !strings.Contains(err.Error(), dir) {
				t.Fatalf("InstallCRDs(%s) = %v, want an error naming the directory", dir, err)
			}
		})
	}
}
