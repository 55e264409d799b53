//go:build k8s

package tenant

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// server is the API server every test of this package shares; each test
// works in namespaces of its own.
var server *apiserver.Server

func TestMain(m *testing.M) {
	wd, _ := os.Getwd()
	os.Exit(apiserver.RunTests(m, filepath.Join(wd, "..", "..", "..", "deploy", "crds"), func(s *apiserver.Server) error {
		server = s
		return nil
	}))
}
