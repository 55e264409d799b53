package model

import (
	"maps"
	"slices"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// Clone returns a deep copy of s: no slice, map or pointer of the copy is
// shared with s (nil stays nil, empty stays empty). The caches of the
// publish path keep a copy of each service they built from, so a source
// that later changes its own service in place is seen to have changed it.
// TestCloneSharesNothing fails when a field is added to a type here and
// not to its copy.
func (s *Service) Clone() Service {
	c := *s
	c.Hosts = slices.Clone(s.Hosts)
	c.Listeners = slices.Clone(s.Listeners)
	c.Delegations = cloneSliceFunc(s.Delegations, func(d Delegation) Delegation {
		d.Namespaces = slices.Clone(d.Namespaces)
		return d
	})
	c.Routes = cloneSliceFunc(s.Routes, Route.clone)
	c.Upstreams = cloneSliceFunc(s.Upstreams, Upstream.clone)
	c.JWT = clonePtrFunc(s.JWT, func(j JWT) JWT {
		j.Audiences = slices.Clone(j.Audiences)
		j.HMAC = PrivateKey{pem: slices.Clone(j.HMAC.pem)}
		j.Remote = clonePtr(j.Remote)
		j.ClaimHeaders = maps.Clone(j.ClaimHeaders)
		return j
	})
	c.CORS = clonePtrFunc(s.CORS, CORSPolicy.clone)
	c.RateLimit = clonePtrFunc(s.RateLimit, cloneRouteLimits)
	c.Responses = clonePtrFunc(s.Responses, func(r ServiceResponses) ServiceResponses {
		r.Headers = clonePtrFunc(r.Headers, HeaderRules.clone)
		r.HSTS = clonePtr(r.HSTS)
		r.ErrorPages = cloneSliceFunc(r.ErrorPages, ErrorPage.clone)
		r.Maintenance = clonePtr(r.Maintenance)
		return r
	})
	return c
}

func (r Route) clone() Route {
	c := r
	c.Headers, c.Queries = slices.Clone(r.Headers), slices.Clone(r.Queries)
	c.Targets, c.Mirrors = cloneTargets(r.Targets), slices.Clone(r.Mirrors)
	c.Rewrite, c.Sticky = clonePtr(r.Rewrite), clonePtr(r.Sticky)
	c.Retries = clonePtrFunc(r.Retries, func(v RetryPolicy) RetryPolicy { v.Codes = slices.Clone(v.Codes); return v })
	c.Redirect = clonePtrFunc(r.Redirect, func(v Redirect) Redirect { v.Path = clonePtr(v.Path); return v })
	c.URLRewrite = clonePtrFunc(r.URLRewrite, func(v URLRewrite) URLRewrite { v.Path = clonePtr(v.Path); return v })
	c.Interceptors = cloneSliceFunc(r.Interceptors, func(in chain.Interceptor) chain.Interceptor {
		in.Headers, in.Parameters = maps.Clone(in.Headers), maps.Clone(in.Parameters)
		in.AllowedOrigins = slices.Clone(in.AllowedOrigins)
		return in
	})
	c.Auth = clonePtrFunc(r.Auth, func(a RouteAuth) RouteAuth {
		a.Required, a.Roles, a.RolesAll = clonePtr(a.Required), slices.Clone(a.Roles), slices.Clone(a.RolesAll)
		return a
	})
	c.CORS = clonePtrFunc(r.CORS, CORSPolicy.clone)
	c.RateLimit = clonePtrFunc(r.RateLimit, cloneRouteLimits)
	c.Responses = clonePtrFunc(r.Responses, func(v RouteResponses) RouteResponses {
		v.Headers = clonePtrFunc(v.Headers, HeaderRules.clone)
		v.ErrorPages = cloneSliceFunc(v.ErrorPages, ErrorPage.clone)
		v.Maintenance, v.DirectResponse, v.RedirectHTTPS = clonePtr(v.Maintenance), clonePtr(v.DirectResponse), clonePtr(v.RedirectHTTPS)
		return v
	})
	c.Canary = clonePtrFunc(r.Canary, func(v Canary) Canary {
		v.Header, v.Cookie = clonePtr(v.Header), clonePtr(v.Cookie)
		return v
	})
	return c
}

func (u Upstream) clone() Upstream {
	u.Endpoints = slices.Clone(u.Endpoints)
	u.DNS = clonePtr(u.DNS)
	u.HealthCheck = clonePtrFunc(u.HealthCheck, func(h HealthCheck) HealthCheck {
		h.ExpectedStatuses = slices.Clone(h.ExpectedStatuses)
		return h
	})
	u.TLS = clonePtrFunc(u.TLS, func(t UpstreamTLS) UpstreamTLS {
		t.CA, t.SubjectAltNames, t.URISubjectAltNames = slices.Clone(t.CA), slices.Clone(t.SubjectAltNames), slices.Clone(t.URISubjectAltNames)
		return t
	})
	return u
}

func (c CORSPolicy) clone() CORSPolicy {
	c.Origins, c.Methods = slices.Clone(c.Origins), slices.Clone(c.Methods)
	c.Headers, c.ExposeHeaders = slices.Clone(c.Headers), slices.Clone(c.ExposeHeaders)
	return c
}

func (h HeaderRules) clone() HeaderRules {
	edits := func(e HeaderEdits) HeaderEdits {
		return HeaderEdits{Set: maps.Clone(e.Set), Add: maps.Clone(e.Add), Remove: slices.Clone(e.Remove)}
	}
	return HeaderRules{Request: edits(h.Request), Response: edits(h.Response)}
}

func (p ErrorPage) clone() ErrorPage {
	p.Statuses = slices.Clone(p.Statuses)
	return p
}

func cloneRouteLimits(l ratelimit.RouteLimits) ratelimit.RouteLimits {
	l.Local = clonePtr(l.Local)
	l.Global = clonePtrFunc(l.Global, func(g ratelimit.Global) ratelimit.Global {
		g.PerClientIP, g.PerRoute = clonePtr(g.PerClientIP), clonePtr(g.PerRoute)
		return g
	})
	return l
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func clonePtrFunc[T any](p *T, clone func(T) T) *T {
	if p == nil {
		return nil
	}
	v := clone(*p)
	return &v
}

// cloneSliceFunc copies a slice and each element with clone; nil stays
// nil, empty stays empty.
func cloneSliceFunc[T any](s []T, clone func(T) T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = clone(v)
	}
	return out
}
