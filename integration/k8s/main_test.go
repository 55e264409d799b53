//go:build k8s

package k8s

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// server is the one API server every test in this package shares; tests run
// one after another and keep to their own environments, pools and names.
var server *apiserver.Server

// ipamBin is the ipam controller binary for tests that run it as a process.
var ipamBin string

func TestMain(m *testing.M) {
	os.Exit(apiserver.RunTests(m, filepath.Join(repoRoot(), "deploy", "crds"), func(s *apiserver.Server) error {
		server = s
		ipamBin = os.Getenv("TLB_IPAM_BIN")
		if ipamBin != "" {
			return nil
		}
		ipamBin = filepath.Join(server.Dir, "ipam")
		cmd := exec.Command("go", "build", "-o", ipamBin, "./ipam/cmd/ipam")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build ipam: %w\n%s", err, out)
		}
		return nil
	}))
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "..", "..")
}
