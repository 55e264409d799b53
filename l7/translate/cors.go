package translate

import (
	"strconv"
	"strings"
	"time"

	cors "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlbproject/tlb/l7/model"
)

// CORSFilter is the HTTP filter name of Envoy's CORS filter, the key of
// its per-route policy.
const CORSFilter = wellknown.CORS

func hasCORS(svcs []model.Service) bool {
	for _, s := range svcs {
		for _, r := range s.Routes {
			if model.EffectiveCORS(s, r) != nil {
				return true
			}
		}
	}
	return false
}

// corsFilter is first in the chain, so a preflight is answered before any
// authentication (browsers send preflights without credentials).
func corsFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: CORSFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&cors.Cors{})}}
}

// corsPerRoute is the route's CORS policy, nil when it has none (the
// filter then leaves its requests alone). Preflights are answered by
// Envoy whether or not the origin matches (forward_not_matching_preflights
// false): the upstream never sees one.
func corsPerRoute(s model.Service, r model.Route) *anypb.Any {
	c := model.EffectiveCORS(s, r)
	if c == nil {
		return nil
	}
	p := &cors.CorsPolicy{
		AllowMethods:                 strings.Join(c.Methods, ","),
		AllowHeaders:                 strings.Join(c.Headers, ","),
		ExposeHeaders:                strings.Join(c.ExposeHeaders, ","),
		AllowCredentials:             wrapperspb.Bool(c.Credentials),
		ForwardNotMatchingPreflights: wrapperspb.Bool(false),
	}
	for _, o := range c.Origins {
		m := &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_Exact{Exact: o}}
		if re, ok := model.OriginRegex(o); ok {
			m = &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_SafeRegex{SafeRegex: &matcher.RegexMatcher{Regex: re}}}
		}
		if o == "*" {
			m = &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_SafeRegex{SafeRegex: &matcher.RegexMatcher{Regex: ".*"}}}
		}
		p.AllowOriginStringMatch = append(p.AllowOriginStringMatch, m)
	}
	if c.MaxAge > 0 {
		p.MaxAge = strconv.FormatInt(int64(c.MaxAge/time.Second), 10)
	}
	return mustAny(p)
}
