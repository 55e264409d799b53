package apiserver

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// StartWithCRDs starts a Server as Start does and installs the CRDs of the
// YAML files in crdDir (none when crdDir is ""). Each step may take up to
// timeout. On error nothing is left running.
func StartWithCRDs(timeout time.Duration, crdDir string) (*Server, error) {
	s, err := Start(timeout)
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver and etcd: %w", err)
	}
	if crdDir == "" {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := InstallCRDs(ctx, s.Config, crdDir); err != nil {
		s.Stop()
		return nil, fmt.Errorf("install the CRDs of %s: %w", crdDir, err)
	}
	return s, nil
}

// RunTests is the body of the TestMain of a package whose tests share one
// API server: it starts the server with the CRDs of crdDir (none when
// ""), calls use with it (for the package variable, and any setup that
// needs the server; an error fails the run), runs the tests and stops the
// server. It returns the exit code for os.Exit.
func RunTests(m *testing.M, crdDir string, use func(*Server) error) int {
	s, err := StartWithCRDs(3*time.Minute, crdDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Stop()
	if err := use(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
