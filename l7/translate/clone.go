package translate

import (
	"maps"
	"slices"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// cloneService deep-copies the slices of a service so the cache's copy is
// not changed when the caller reuses its own.
func cloneService(s model.Service) model.Service {
	s.Hosts = slices.Clone(s.Hosts)
	s.Listeners = slices.Clone(s.Listeners)
	s.Delegations = slices.Clone(s.Delegations)
	rs := make([]model.Route, len(s.Routes))
	for i, r := range s.Routes {
		r.Headers = slices.Clone(r.Headers)
		r.Targets = slices.Clone(r.Targets)
		r.Queries = slices.Clone(r.Queries)
		r.Mirrors = slices.Clone(r.Mirrors)
		r.Redirect, r.URLRewrite = cloneRedirect(r.Redirect), cloneURLRewrite(r.URLRewrite)
		if r.Rewrite != nil {
			v := *r.Rewrite
			r.Rewrite = &v
		}
		if r.Retries != nil {
			v := *r.Retries
			r.Retries = &v
		}
		if r.Sticky != nil {
			v := *r.Sticky
			r.Sticky = &v
		}
		r.Interceptors = cloneChain(r.Interceptors)
		r.CORS = cloneCORS(r.CORS)
		r.RateLimit = cloneRateLimit(r.RateLimit)
		r.Responses = cloneRouteResponses(r.Responses)
		if r.Auth != nil {
			a := *r.Auth
			a.Roles, a.RolesAll = slices.Clone(a.Roles), slices.Clone(a.RolesAll)
			r.Auth = &a
		}
		rs[i] = r
	}
	s.Routes = rs
	s.CORS = cloneCORS(s.CORS)
	s.RateLimit = cloneRateLimit(s.RateLimit)
	s.Responses = cloneServiceResponses(s.Responses)
	if s.JWT != nil {
		j := *s.JWT
		j.Audiences = slices.Clone(j.Audiences)
		j.ClaimHeaders = maps.Clone(j.ClaimHeaders)
		if j.Remote != nil {
			r := *j.Remote
			j.Remote = &r
		}
		s.JWT = &j
	}
	us := make([]model.Upstream, len(s.Upstreams))
	for i, u := range s.Upstreams {
		u.Endpoints = slices.Clone(u.Endpoints)
		u.TLS = cloneUpstreamTLS(u.TLS)
		if u.DNS != nil {
			n := *u.DNS
			u.DNS = &n
		}
		if u.HealthCheck != nil {
			hc := *u.HealthCheck
			hc.ExpectedStatuses = slices.Clone(hc.ExpectedStatuses)
			u.HealthCheck = &hc
		}
		us[i] = u
	}
	s.Upstreams = us
	return s
}

// cloneChain deep-copies a route's interceptors (their maps and slices).
func cloneChain(c chain.Chain) chain.Chain {
	if c == nil {
		return nil
	}
	out := slices.Clone(c)
	for i := range out {
		out[i].Headers = maps.Clone(out[i].Headers)
		out[i].Parameters = maps.Clone(out[i].Parameters)
		out[i].AllowedOrigins = slices.Clone(out[i].AllowedOrigins)
	}
	return out
}

func cloneCORS(c *model.CORSPolicy) *model.CORSPolicy {
	if c == nil {
		return nil
	}
	v := *c
	v.Origins, v.Methods = slices.Clone(v.Origins), slices.Clone(v.Methods)
	v.Headers, v.ExposeHeaders = slices.Clone(v.Headers), slices.Clone(v.ExposeHeaders)
	return &v
}

// cloneRateLimit deep-copies rate limits; nil stays nil.
func cloneRateLimit(l *ratelimit.RouteLimits) *ratelimit.RouteLimits {
	if l == nil {
		return nil
	}
	c := *l
	if l.Local != nil {
		v := *l.Local
		c.Local = &v
	}
	if g := l.Global; g != nil {
		v := *g
		if g.PerClientIP != nil {
			q := *g.PerClientIP
			v.PerClientIP = &q
		}
		if g.PerRoute != nil {
			q := *g.PerRoute
			v.PerRoute = &q
		}
		c.Global = &v
	}
	return &c
}

func cloneRedirect(r *model.Redirect) *model.Redirect {
	if r == nil {
		return nil
	}
	v := *r
	v.Path = clonePathModifier(r.Path)
	return &v
}

func cloneURLRewrite(u *model.URLRewrite) *model.URLRewrite {
	if u == nil {
		return nil
	}
	v := *u
	v.Path = clonePathModifier(u.Path)
	return &v
}

func clonePathModifier(p *model.PathModifier) *model.PathModifier {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// clonePassthrough deep-copies a TLS listener's entries.
func clonePassthrough(in []model.SNITarget) []model.SNITarget {
	if in == nil {
		return nil
	}
	out := make([]model.SNITarget, len(in))
	for i, p := range in {
		out[i] = model.SNITarget{ServerNames: slices.Clone(p.ServerNames), Targets: slices.Clone(p.Targets)}
	}
	return out
}
