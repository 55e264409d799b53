//go:build k8s

package k8sagents

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// server is the API server every test of this package shares; tests keep
// to their own names.
var server *apiserver.Server

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
	wd, _ := os.Getwd()
	if err := apiserver.InstallCRDs(ctx, server.Config, filepath.Join(wd, "..", "..", "deploy", "crds")); err != nil {
		fmt.Fprintln(os.Stderr, "install CRDs:", err)
		return 1
	}
	return m.Run()
}
