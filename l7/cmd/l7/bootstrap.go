package main

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/tlbproject/tlb/l7/bootstrap"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
)

// runBootstrap handles "l7 bootstrap": it writes the Envoy bootstrap of a
// gateway of a group, declaring this build's generation. The gateway
// pod's init container runs it from the same image as its l7 container.
func runBootstrap(args []string) error {
	fs := flag.NewFlagSet("bootstrap", flag.ExitOnError)
	group := fs.String("group", "", "gateway group (required)")
	out := fs.String("out", "", "file to write (required); - for standard output")
	stats := fs.String("stats-address", "127.0.0.1:9902", "IP:port of the read-only stats and readiness listener")
	xdsSocket := fs.String("xds-socket", "/run/tlb/xds.sock", "unix socket of l7's ADS")
	authzSocket := fs.String("authz-socket", translate.DefaultAuthzSocket, "unix socket of l7's authorization service (l7 serve --authz-listen); empty: none")
	adminSocket := fs.String("admin-socket", "/run/tlb/envoy-admin.sock", "unix socket of Envoy's admin API")
	maxHeap := fs.Uint64("max-heap-bytes", 1536<<20, "Envoy heap the overload manager protects")
	maxConns := fs.Uint64("max-connections", 50000, "downstream connection limit")
	_ = fs.Parse(args)
	if *group == "" || *out == "" {
		return errors.New("bootstrap: --group and --out are required")
	}
	addr, err := netip.ParseAddrPort(*stats)
	if err != nil {
		return fmt.Errorf("bootstrap: --stats-address %q: %w", *stats, err)
	}
	b, err := bootstrap.Build(bootstrap.Gateway{Group: *group, Generation: xds.Generation(), XDSSocket: *xdsSocket,
		AuthzSocket: *authzSocket, AdminSocket: *adminSocket, Stats: addr, MaxHeapBytes: *maxHeap, MaxConnections: *maxConns})
	if err != nil {
		return err
	}
	y, err := translate.YAML(b)
	if err != nil {
		return err
	}
	y = append([]byte("# Envoy bootstrap written by l7 bootstrap (generation "+xds.Generation()+"); do not edit.\n"), y...)
	if *out == "-" {
		_, err = os.Stdout.Write(y)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".bootstrap-*")
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(y); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("bootstrap: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o444); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("bootstrap: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	return os.Rename(tmp.Name(), *out)
}
