//go:build k8s

package k8sl7

import (
	"os"
	"testing"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// server is the API server every test of this package shares; each test
// works in its own namespace.
var server *apiserver.Server

func TestMain(m *testing.M) {
	os.Exit(apiserver.RunTests(m, "", func(s *apiserver.Server) error {
		server = s
		return nil
	}))
}
