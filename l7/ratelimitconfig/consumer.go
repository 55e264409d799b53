// Package ratelimitconfig is the pipeline consumer that gives the rate
// limit service (envoyproxy/ratelimit) the global limits of each change:
// the domain is the group, one descriptor tree per route with a global
// limit (model.GroupRateLimits), served over xDS by
// l7/ratelimit/configserver. main lists it after the xDS consumer: when
// the gateways' resources fail validation they keep their last good set,
// and the service keeps its last good limits with them.
package ratelimitconfig

import (
	"context"
	"log/slog"
	"net"

	"google.golang.org/grpc"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/ratelimit/configserver"
)

// Configs receives the configuration of the rate limit service.
// *configserver.Server implements it.
type Configs interface {
	Set(ctx context.Context, cfgs ...ratelimit.ServiceConfig) (bool, error)
}

// Consumer gives Configs the global limits of each change, resolved once
// with the gateways' own (the pipeline's resolve), so the service counts
// exactly the descriptors the gateways' routes send. A service that the
// resolve rejects is left out alone, as it is from the gateways.
type Consumer struct {
	Group   string
	Configs Configs
	Log     *slog.Logger
}

// Consume implements pipeline.Consumer.
func (p *Consumer) Consume(ctx context.Context, c pipeline.Change, rep *pipeline.Report) {
	if len(rep.Invalid) > 0 {
		p.Log.Error("gateway resources failed validation; the rate limit service keeps its last good limits", "domain", p.Group)
		return
	}
	svc, err := model.GroupRateLimits(*c.Resolved, p.Group)
	if err != nil {
		p.Log.Error("rate limit configuration not built; the service keeps its last good limits", "domain", p.Group, "err", err)
		return
	}
	changed, err := p.Configs.Set(ctx, svc)
	if err != nil {
		p.Log.Error("rate limit configuration not served; the service keeps its last good limits", "domain", p.Group, "err", err)
		return
	}
	if changed {
		p.Log.Info("rate limit configuration published", "domain", p.Group, "routes", len(svc.Descriptors))
	}
}

// Serve serves the rate limit service's configuration over xDS on lis
// until ctx ends, and returns the server to give the configuration to
// and the channel that receives Serve's result.
func Serve(ctx context.Context, lis net.Listener) (*configserver.Server, <-chan error) {
	cs := configserver.New(ctx)
	gs := grpc.NewServer()
	cs.Register(gs)
	done := make(chan error, 1)
	go func() { done <- gs.Serve(lis) }()
	go func() { <-ctx.Done(); gs.Stop() }()
	return cs, done
}
