// Package ratelimitenvoy builds the Envoy side of the rate limits of
// l7/ratelimit for the translator: the local and global rate limit HTTP
// filters, their per-route configuration and route actions, and the
// cluster of the rate limit service. It lives with the translator, so
// that the model (and l7/ratelimit, which the model imports) holds no
// Envoy protobuf. Pure and deterministic: limits in, protobufs out.
package ratelimitenvoy

import (
	common "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlcommon "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	localrl "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlbproject/tlb/l7/ratelimit"
)

// LocalFilterName is the name of Envoy's local rate limit HTTP filter, and
// the key of its per-route configuration in typed_per_filter_config.
const LocalFilterName = "envoy.filters.http.local_ratelimit"

// localStatPrefix roots the filter's stats at <prefix>.http_local_rate_limit
// (Envoy 1.40: local_rate_limit.http_local_rate_limit.rate_limited).
const localStatPrefix = "local_rate_limit"

// RateLimitedHeader marks a 429 the gateway answered itself (not an
// upstream's). Envoy's global rate limit filter sets it; its local filter,
// though its documentation says so too, does not (Envoy 1.40.0, seen
// through a real Envoy), so LocalPerRoute adds it.
const RateLimitedHeader = "x-envoy-ratelimited"

// maxClientBuckets is how many client addresses one route tracks at once
// (Envoy's max_dynamic_descriptors, default 20): the least recently seen
// address beyond it loses its bucket and starts again with a full one.
const maxClientBuckets = 10_000

// LocalFilter is the local rate limit entry of an HTTP connection manager.
// It is inert: no token bucket, enabled for 0% of requests (the proto's
// default). Only routes that carry a LocalPerRoute configuration are
// limited, so the filter can sit in every gateway's chain, before the
// global filter and the router.
func LocalFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{
		Name:       LocalFilterName,
		ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&localrl.LocalRateLimit{StatPrefix: localStatPrefix})},
	}
}

// LocalPerRoute is the per-route configuration of the local rate limit
// filter for l: one token bucket per client address. The route's own
// rate_limits (field rate_limits of the filter) produce a remote_address
// descriptor; the wildcard descriptor (key without value) gives each
// distinct address its own bucket. The route-level bucket is required by
// Envoy for per-route configurations but, with
// always_consume_default_token_bucket off, is consumed only when no
// descriptor matches, which cannot happen since every request has an
// address. Rejected requests get 429 with Retry-After, the draft-03
// X-RateLimit headers and RateLimitedHeader, as the global filter's.
func LocalPerRoute(l ratelimit.Local) *localrl.LocalRateLimit {
	b := ratelimit.NewRefill(l.RequestsPerSecond)
	tb := &typev3.TokenBucket{
		MaxTokens:     l.Burst,
		TokensPerFill: wrapperspb.UInt32(b.Tokens),
		FillInterval:  durationpb.New(b.Interval),
	}
	return &localrl.LocalRateLimit{
		StatPrefix:     localStatPrefix,
		Status:         &typev3.HttpStatus{Code: typev3.StatusCode_TooManyRequests},
		TokenBucket:    tb,
		FilterEnabled:  full("local_rate_limit_enabled"),
		FilterEnforced: full("local_rate_limit_enforced"),
		Descriptors: []*rlcommon.LocalRateLimitDescriptor{{
			Entries:     []*rlcommon.RateLimitDescriptor_Entry{{Key: ratelimit.DescriptorClientIP}},
			TokenBucket: tb,
		}},
		RateLimits:                      []*route.RateLimit{{Actions: []*route.RateLimit_Action{clientIPAction()}}},
		AlwaysConsumeDefaultTokenBucket: wrapperspb.Bool(false),
		MaxDynamicDescriptors:           wrapperspb.UInt32(maxClientBuckets),
		EnableXRatelimitHeaders:         rlcommon.XRateLimitHeadersRFCVersion_DRAFT_VERSION_03,
		EnableRetryAfterHeader:          true,
		ResponseHeadersToAdd: []*common.HeaderValueOption{{
			Header:       &common.HeaderValue{Key: RateLimitedHeader, Value: "true"},
			AppendAction: common.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		}},
	}
}

// full is a runtime fraction of 100% under key (an operator can lower it
// through the runtime to dry-run or disable the limit).
func full(key string) *common.RuntimeFractionalPercent {
	return &common.RuntimeFractionalPercent{
		DefaultValue: &typev3.FractionalPercent{Numerator: 100, Denominator: typev3.FractionalPercent_HUNDRED},
		RuntimeKey:   key,
	}
}

func clientIPAction() *route.RateLimit_Action {
	return &route.RateLimit_Action{ActionSpecifier: &route.RateLimit_Action_RemoteAddress_{
		RemoteAddress: &route.RateLimit_Action_RemoteAddress{},
	}}
}
