//go:build k8s

package k8sgateway

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// server is the one API server every test in this package shares.
var server *apiserver.Server

func TestMain(m *testing.M) {
	wd, _ := os.Getwd()
	os.Exit(apiserver.RunTests(m, filepath.Join(wd, "..", "..", "deploy", "crds"), func(s *apiserver.Server) error {
		server = s
		return nil
	}))
}
