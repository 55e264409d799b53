package builtin

import (
	"context"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// CSP is cspInterceptor.
type CSP struct {
	header intercept.Header
}

// NewCSP builds cspInterceptor from its decoded settings.
func NewCSP(cfg chain.Interceptor) *CSP {
	name := "content-security-policy"
	if cfg.ReportOnly {
		name = "content-security-policy-report-only"
	}
	return &CSP{header: intercept.Header{Name: name, Value: cfg.Policy}}
}

// Intercept adds the policy to the response.
func (c *CSP) Intercept(context.Context, *intercept.Request) (intercept.Verdict, error) {
	return intercept.Verdict{Downstream: []intercept.Header{c.header}}, nil
}
