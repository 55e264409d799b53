package envoybench

import (
	"context"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
)

// startGateway starts l7 serve (with serve's arguments) and Envoy as
// deploy/envoy does, in root/gw, on hostIP, and waits until Envoy is
// ready.
func startGateway(ctx context.Context, root string, hostIP netip.Addr, serve []string, authz bool) (*envoyproc.Gateway, error) {
	g, err := envoyproc.Start(envoyproc.Options{Group: "edge", Dir: filepath.Join(root, "gw"), Serve: serve, Authz: authz, HostIP: hostIP.String()})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := g.WaitReady(wctx); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}
