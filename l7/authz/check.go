package authz

import (
	"context"
	"net/http"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc/codes"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// Check is envoy.service.auth.v3.Authorization/Check: it runs the chain of
// the request's route. Every answer is a CheckResponse; the RPC itself
// fails only when the client goes away.
func (s *Service) Check(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	value, ok := req.GetAttributes().GetContextExtensions()[chain.Key]
	if !ok {
		s.metrics.checks.WithLabelValues(decisionAllow).Inc()
		return allowed(outcome{}), nil
	}
	c := s.chains.get(value)
	if c.err != nil {
		s.metrics.checks.WithLabelValues("bad_config").Inc()
		msg := "authz: bad interceptor configuration of this route: " + c.err.Error()
		return denied(codes.InvalidArgument, msg, &intercept.Response{
			Status:  http.StatusInternalServerError,
			Headers: []intercept.Header{{Name: "content-type", Value: "text/plain; charset=utf-8"}},
			Body:    msg + "\n",
		}), nil
	}
	if len(c.steps) == 0 {
		s.metrics.checks.WithLabelValues(decisionAllow).Inc()
		return allowed(outcome{}), nil
	}
	out := s.run(ctx, c.steps, requestFrom(req.GetAttributes().GetRequest().GetHttp()))
	switch {
	case out.failed != nil:
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.metrics.checks.WithLabelValues(decisionError).Inc()
		return denied(codes.Unavailable, "authz: "+out.failed.Error(), &intercept.Response{
			Status:  http.StatusServiceUnavailable,
			Headers: []intercept.Header{{Name: "content-type", Value: "text/plain; charset=utf-8"}},
			Body:    "service unavailable: the authorization check failed\n",
		}), nil
	case out.deny != nil:
		s.metrics.checks.WithLabelValues(decisionDeny).Inc()
		code := codes.PermissionDenied
		if out.deny.Status == http.StatusUnauthorized {
			code = codes.Unauthenticated
		}
		return denied(code, "authz: refused by an interceptor", out.deny), nil
	}
	s.metrics.checks.WithLabelValues(decisionAllow).Inc()
	return allowed(out), nil
}
