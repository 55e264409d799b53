package apiserver

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Retry bounds for a request the API server answers with "retry": the
// first wait, the longest, and how long to keep trying when the caller's
// context sets no deadline.
const (
	retryFirst   = 200 * time.Millisecond
	retryLongest = 5 * time.Second
	retryFor     = 5 * time.Minute
)

// Retryable reports whether the API server's answer says the request may
// succeed if sent again: it timed out in the server (504, reasons Timeout
// and ServerTimeout: "request did not complete within requested
// timeout", which a loaded etcd gives), it was throttled (429), the server
// is not serving yet (503), or the answer asks for a later retry
// (RetryAfterSeconds). Everything else (invalid, forbidden, not found, ...)
// fails the same way again.
func Retryable(err error) bool {
	if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) {
		return true
	}
	delay, ok := apierrors.SuggestsClientDelay(err)
	return ok && delay > 0
}

// retry calls do until it returns nil or an error that is not Retryable,
// waiting between calls (doubling from retryFirst up to retryLongest, or
// what the server asks for), for as long as ctx lets it (retryFor when ctx
// has no deadline). what names the request in the error and for onRetry,
// which, when not nil, hears of each retryable error.
func retry(ctx context.Context, what string, onRetry func(what string, err error), do func(context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, retryFor)
		defer cancel()
	}
	wait := retryFirst
	for attempt := 1; ; attempt++ {
		err := do(ctx)
		if err == nil || !Retryable(err) {
			return err
		}
		if onRetry != nil {
			onRetry(what, err)
		}
		pause := wait
		if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
			pause = time.Duration(s) * time.Second
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: still retryable after %d attempts when %w: %w", what, attempt, ctx.Err(), err)
		case <-time.After(pause):
		}
		wait = min(2*wait, retryLongest)
	}
}
