package authzbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// Child runs the service side (Redis with sessions, the service, the
// external interceptor), prints "addrs <authz addr> <external addr>"
// on out and runs until in is closed. The driver measures the child's CPU time, so
// the service's cost per check is its own, not the client's.
func Child(ctx context.Context, dir string, sessions int, in io.Reader, out io.Writer, log *slog.Logger) error {
	r, err := start(ctx, dir, sessions, log)
	if err != nil {
		return err
	}
	defer r.stop()
	if _, err := fmt.Fprintf(out, "addrs %s %s\n", r.authzAddr, r.extAddr); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, in)
	return nil
}
