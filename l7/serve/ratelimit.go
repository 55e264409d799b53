package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"google.golang.org/grpc"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/ratelimit/configserver"
	"github.com/tlbproject/tlb/l7/xds"
)

// RateLimitConfigs receives the configuration of the rate limit service.
// *configserver.Server implements it.
type RateLimitConfigs interface {
	Set(ctx context.Context, cfgs ...ratelimit.ServiceConfig) (bool, error)
}

// RateLimitPublisher publishes a configuration to the gateways (Next),
// then gives the rate limit service the global limits of the same
// configuration, resolved with the same options as the gateways', so the
// service counts exactly the descriptors the gateways' routes send: the
// domain is the group, one descriptor tree per route with a global limit.
// A service that Resolve rejects is left out alone, as it is from the
// gateways. When the gateways' resource set fails validation (their last
// good set stays) or the limits cannot be built, the service keeps its
// last good limits too.
type RateLimitPublisher struct {
	Next    Publisher
	Group   string
	Resolve model.Options
	Configs RateLimitConfigs
	Log     *slog.Logger
}

// Publish implements Publisher.
func (p *RateLimitPublisher) Publish(ctx context.Context, cfg model.Config) xds.Report {
	rep := p.Next.Publish(ctx, cfg)
	if len(rep.Invalid) > 0 {
		p.Log.Error("gateway resources failed validation; the rate limit service keeps its last good limits", "domain", p.Group)
		return rep
	}
	resolved := rep.Resolved
	if resolved == nil { // a Next that does not say
		r := model.Resolve(cfg, p.Resolve)
		resolved = &r
	}
	svc, err := GroupRateLimits(*resolved, p.Group)
	if err != nil {
		p.Log.Error("rate limit configuration not built; the service keeps its last good limits", "domain", p.Group, "err", err)
		return rep
	}
	changed, err := p.Configs.Set(ctx, svc)
	if err != nil {
		p.Log.Error("rate limit configuration not served; the service keeps its last good limits", "domain", p.Group, "err", err)
		return rep
	}
	if changed {
		p.Log.Info("rate limit configuration published", "domain", p.Group, "routes", len(svc.Descriptors))
	}
	return rep
}

// GroupRateLimits is the rate limit service's configuration of a group:
// the global limits of the routes of its resolved services, each named by
// model.RouteID, as the translator names their descriptors.
func GroupRateLimits(r model.Resolved, group string) (ratelimit.ServiceConfig, error) {
	var routes []ratelimit.RouteLimits
	for _, s := range r.Config.Services {
		if s.Group != group {
			continue
		}
		for i := range s.Routes {
			if l := model.RouteLimits(s, i); l.Global != nil {
				routes = append(routes, l)
			}
		}
	}
	return ratelimit.Service(group, routes)
}

// ServeRateLimitConfigs serves the rate limit service's configuration of
// group over xDS on lis (the caller makes it loopback) until ctx ends,
// and returns the Publisher that feeds it after next (the gateways), with
// the options the gateways resolve with, and the channel that receives
// Serve's result.
func ServeRateLimitConfigs(ctx context.Context, log *slog.Logger, lis net.Listener, group string, opts model.Options, next Publisher) (Publisher, <-chan error) {
	cs := configserver.New(ctx)
	gs := grpc.NewServer()
	cs.Register(gs)
	done := make(chan error, 1)
	go func() { done <- gs.Serve(lis) }()
	go func() { <-ctx.Done(); gs.Stop() }()
	return &RateLimitPublisher{Next: next, Group: group, Resolve: opts, Configs: cs, Log: log}, done
}

// rateLimitYAML is the rate limit service's configuration of group, as
// the file (ratelimit.ServiceConfig.YAML) the service can load.
func rateLimitYAML(r model.Resolved, group string) ([]byte, error) {
	cfg, err := GroupRateLimits(r, group)
	if err != nil {
		return nil, fmt.Errorf("render group %q: rate limit configuration: %w", group, err)
	}
	return cfg.YAML()
}
