//go:build conformance

package gatewayconformance

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests, or, in a process PodProcesses started for a
// coredns container, the DNS stand-in.
func TestMain(m *testing.M) {
	if addr := os.Getenv(DNSStandInEnv); addr != "" {
		fmt.Fprintln(os.Stderr, ServeDNSStandIn(addr))
		os.Exit(1)
	}
	os.Exit(m.Run())
}
