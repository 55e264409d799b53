package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit/configserver"
	"github.com/tlbproject/tlb/l7/ratelimitconfig"
)

const rateLimitAddressUsage = "HOST:PORT (gRPC) of the group's rate limit service (envoyproxy/ratelimit); gateways then enforce global limits through it; default none: global limits are reported and not served"

const rateLimitXDSUsage = "serve the rate limit service's configuration (the group's global limits, domain = group) over xDS on this unix socket, unix:///PATH in a volume the service beside l7 shares (its CONFIG_GRPC_XDS_SERVER_URL); default off"

// rateLimitOptions adds the operator's rate limit service to opts; an
// empty addr leaves it unset.
func rateLimitOptions(opts model.Options, addr string) (model.Options, error) {
	if addr == "" {
		return opts, nil
	}
	svc, err := model.ParseRateLimitService(addr)
	if err != nil {
		return opts, fmt.Errorf("--ratelimit-address: %w", err)
	}
	opts.RateLimitService = svc
	return opts, nil
}

// startRateLimitConfigs serves the rate limit service's configuration
// over xDS on the unix socket addr (unix:///PATH, shared with the service
// in its pod) until ctx ends, and returns the server to give it to (the
// pipeline's ratelimitconfig.Consumer) and the channel that receives
// Serve's result.
func startRateLimitConfigs(ctx context.Context, log *slog.Logger, addr, group string) (*configserver.Server, <-chan error, error) {
	path, err := podSocket("--ratelimit-xds-listen", addr)
	if err != nil {
		return nil, nil, err
	}
	lis, err := listenADS("unix", path)
	if err != nil {
		return nil, nil, fmt.Errorf("--ratelimit-xds-listen: %w", err)
	}
	cs, done := ratelimitconfig.Serve(ctx, lis)
	log.Info("serving the rate limit service's configuration over xDS", "addr", addr, "domain", group)
	return cs, done, nil
}
