package gatewayapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// functions are a TrafficPolicy's gateway functions in model form; nil
// fields are not set by the policy.
type functions struct {
	chain     chain.Chain
	jwt       *model.JWT
	auth      *model.RouteAuth
	cors      *model.CORSPolicy
	rateLimit *ratelimit.RouteLimits
}

// policyFunctions converts the spec of p. Key material is read from the
// Secrets of p's namespace. The message names the field that is wrong.
func (b *builder) policyFunctions(p *tlbv1alpha1.TrafficPolicy) (functions, string) {
	var fn functions
	s := p.Spec
	if s.Interceptors != nil {
		raw, err := json.Marshal(s.Interceptors)
		if err == nil {
			fn.chain, err = chain.Decode(string(raw))
		}
		if err == nil {
			err = chain.CheckDeclaredOnly(fn.chain)
		}
		if err != nil {
			return fn, "spec.interceptors: " + err.Error()
		}
	}
	if j := s.JWT; j != nil {
		m := &model.JWT{Issuer: j.Issuer, Audiences: j.Audiences, JWKS: j.JWKS, Cookie: j.Cookie,
			ClaimHeaders: j.ClaimMappings, StripAuthorization: j.StripAuthorization, Required: j.Required == nil || *j.Required}
		if ref := j.HMACSecretRef; ref != nil {
			sec := b.secrets[nn(p.Namespace, ref.Name)]
			if sec == nil || len(sec.Data[ref.Key]) == 0 {
				return fn, fmt.Sprintf("spec.jwt.hmacSecretRef: no key %q in Secret %s/%s", ref.Key, p.Namespace, ref.Name)
			}
			m.HMAC, m.HMACAlg = model.NewPrivateKey([]byte(strings.TrimRight(string(sec.Data[ref.Key]), "\r\n"))), or(j.Algorithm, "HS256")
		} else if j.Algorithm != "" {
			return fn, "spec.jwt.algorithm: only with hmacSecretRef"
		}
		fn.jwt = m
	}
	if a := s.Auth; a != nil {
		fn.auth = &model.RouteAuth{Required: a.Required, Roles: a.Roles, RolesAll: a.RolesAll}
	}
	if c := s.CORS; c != nil {
		fn.cors = &model.CORSPolicy{Origins: c.AllowOrigins, Methods: c.AllowMethods, Headers: c.AllowHeaders,
			ExposeHeaders: c.ExposeHeaders, Credentials: c.AllowCredentials}
		if c.MaxAge != "" {
			d, err := time.ParseDuration(c.MaxAge)
			if err != nil || d <= 0 {
				return fn, fmt.Sprintf("spec.cors.maxAge: want a positive duration such as \"10m\", got %q", c.MaxAge)
			}
			fn.cors.MaxAge = d
		}
	}
	if r := s.RateLimit; r != nil {
		fn.rateLimit = &ratelimit.RouteLimits{}
		if l := r.Local; l != nil {
			if l.Burst < 0 {
				return fn, "spec.rateLimit.local.burst: must not be negative"
			}
			fn.rateLimit.Local = &ratelimit.Local{RequestsPerSecond: l.RequestsPerSecond, Burst: uint32(l.Burst)}
		}
		if g := r.Global; g != nil {
			fn.rateLimit.Global = &ratelimit.Global{PerClientIP: quota(g.PerClientIP), PerRoute: quota(g.PerRoute)}
		}
	}
	return fn, ""
}

func quota(q *tlbv1alpha1.RateLimitQuota) *ratelimit.Quota {
	if q == nil {
		return nil
	}
	n := q.Requests
	if n < 0 {
		n = 0 // the model's check reports a zero quota
	}
	return &ratelimit.Quota{Requests: uint32(n), Unit: ratelimit.Unit(q.Unit)}
}

// applyService sets fn on a whole service: the service-wide settings and
// each route's interceptors and auth.
func (fn functions) applyService(s *model.Service) {
	if fn.jwt != nil {
		s.JWT = fn.jwt
	}
	if fn.cors != nil {
		s.CORS = fn.cors
	}
	if fn.rateLimit != nil {
		s.RateLimit = fn.rateLimit
	}
	for i := range s.Routes {
		fn.applyRoute(&s.Routes[i], false)
	}
}

// applyRoute sets fn on one route; own says whether cors and rate limits
// go on the route itself (a rule target) rather than its service.
func (fn functions) applyRoute(r *model.Route, own bool) {
	if fn.chain != nil {
		r.Interceptors = fn.chain
	}
	if fn.auth != nil {
		r.Auth = fn.auth
	}
	if own && fn.cors != nil {
		r.CORS = fn.cors
	}
	if own && fn.rateLimit != nil {
		r.RateLimit = fn.rateLimit
	}
}
