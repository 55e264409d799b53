package gatewayapi

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// retryOn is what a Gateway API retry retries besides its codes: a
// backend that cannot be connected to, refuses the stream, or resets or
// times out (timeouts.backendRequest) before answering.
const retryOn = "connect-failure,refused-stream,reset"

// defaultRetryAttempts is the retries of a rule whose retry sets no
// attempts (the spec leaves it to the implementation): Envoy's default.
const defaultRetryAttempts = 1

// httpRetry maps a rule's retry (at field f) to the route's retry
// policy: attempts are retries after the first request, codes the
// answers retried, backoff the base of Envoy's jittered exponential
// back-off. Within timeouts.request, which bounds the whole request;
// timeouts.backendRequest bounds each attempt.
func httpRetry(f string, r *gatewayv1.HTTPRouteRetry, rb *routeBuild) *model.RetryPolicy {
	if r == nil {
		return nil
	}
	p := &model.RetryPolicy{Attempts: defaultRetryAttempts, On: retryOn}
	if r.Attempts != nil {
		if *r.Attempts < 1 {
			rb.unsupportedf("%s.retry.attempts: want at least 1, got %d", f, *r.Attempts)
			return nil
		}
		p.Attempts = uint32(*r.Attempts)
	}
	for _, c := range r.Codes {
		// The CRD allows 400-599; the model checks again.
		p.Codes = append(p.Codes, uint32(c))
	}
	if len(p.Codes) > 0 {
		p.On += ",retriable-status-codes"
	}
	if d := duration(f+".retry.backoff", r.Backoff, rb); d > 0 {
		p.Backoff = d
	}
	return p
}
