package external

import (
	"context"
	"fmt"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/external/interceptorpb"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// GRPC is an external interceptor reached over gRPC.
type GRPC struct {
	call
	address string
	conns   *Conns
}

// NewGRPC builds the interceptor of cfg (transport grpc); its connection
// comes from conns on first use.
func NewGRPC(cfg chain.Interceptor, conns *Conns) (*GRPC, error) {
	c, err := newCall(cfg)
	if err != nil {
		return nil, err
	}
	return &GRPC{call: c, address: cfg.Address, conns: conns}, nil
}

// Intercept calls Interceptor/Intercept.
func (g *GRPC) Intercept(ctx context.Context, r *intercept.Request) (intercept.Verdict, error) {
	cc, err := g.conns.Get(g.address)
	if err != nil {
		return intercept.Verdict{}, err
	}
	resp, err := interceptorpb.NewInterceptorClient(cc).Intercept(ctx, g.request(r))
	if err != nil {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s at %s: %w", g.id, g.address, err)
	}
	v, err := verdict(resp)
	if err != nil {
		return v, fmt.Errorf("interceptor %s at %s: %w", g.id, g.address, err)
	}
	return v, nil
}
