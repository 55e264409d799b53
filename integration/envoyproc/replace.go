package envoyproc

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// StopL7 ends l7 serve as the kubelet ends the l7 pod of an upgrade
// (SIGTERM, SIGKILL after 10 s, the manifest's grace period), leaving
// Envoy running.
func (g *Gateway) StopL7(ctx context.Context) error {
	c := g.L7Cmd
	_ = c.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-g.exited[c]:
		g.exited[c] <- err
	case <-time.After(10 * time.Second):
		_ = c.Process.Kill()
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// StartL7 starts l7 as the new l7 pod of an upgrade does: its init
// containers (the manifest's bootstrap, written again) and then l7
// serve with the same arguments, beside the Envoy that kept running.
func (g *Gateway) StartL7() error {
	boot := g.rw.args(g.spec.Bootstrap)
	if out, err := g.command(boot, false).CombinedOutput(); err != nil {
		return fmt.Errorf("envoyproc: %s: %w\n%s", strings.Join(boot, " "), err, out)
	}
	cmd, err := g.start("l7", g.serve, false)
	if err != nil {
		return err
	}
	g.L7Cmd = cmd
	return nil
}
