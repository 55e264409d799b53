//go:build k8s

package k8sl7

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// server is the API server every test of this package shares; each test
// works in its own namespace.
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
	return m.Run()
}
