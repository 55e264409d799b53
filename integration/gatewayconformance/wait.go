package gatewayconformance

import (
	"context"
	"fmt"
	"time"
)

// waitFor polls cond every 100 ms until it holds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	return pollEvery(ctx, timeout, 100*time.Millisecond, cond)
}

// pollEvery polls cond every interval until it holds or timeout passes.
func pollEvery(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), last)
		case <-tick.C:
		}
	}
}
