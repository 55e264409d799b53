//go:build k8s

package k8s

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// server is the one API server every test in this package shares; tests run
// one after another and keep to their own environments, pools and names.
var server *apiserver.Server

// ipamBin is the ipam controller binary for tests that run it as a process.
var ipamBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	server, err = apiserver.Start(3 * time.Minute)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start kube-apiserver and etcd:", err)
		return 1
	}
	defer server.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := apiserver.InstallCRDs(ctx, server.Config, filepath.Join(repoRoot(), "deploy", "crds")); err != nil {
		fmt.Fprintln(os.Stderr, "install CRDs:", err)
		return 1
	}
	ipamBin = os.Getenv("TLB_IPAM_BIN")
	if ipamBin == "" {
		ipamBin = filepath.Join(server.Dir, "ipam")
		cmd := exec.Command("go", "build", "-o", ipamBin, "./ipam/cmd/ipam")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build ipam: %v\n%s", err, out)
			return 1
		}
	}
	return m.Run()
}

func repoRoot() string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "..", "..")
}
