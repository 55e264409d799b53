package api

import (
	"maps"
	"slices"
)

// DeepCopy returns a copy of c that shares nothing with it.
func (c InterceptorChain) DeepCopy() InterceptorChain {
	if c == nil {
		return nil
	}
	out := make(InterceptorChain, len(c))
	for i, in := range c {
		in.Headers = maps.Clone(in.Headers)
		in.AllowedOrigins = slices.Clone(in.AllowedOrigins)
		in.Parameters = maps.Clone(in.Parameters)
		out[i] = in
	}
	return out
}

// DeepCopyInto copies j into out, sharing nothing.
func (j *JWT) DeepCopyInto(out *JWT) {
	*out = *j
	out.Audiences = slices.Clone(j.Audiences)
	out.ClaimMappings = maps.Clone(j.ClaimMappings)
	out.Required = clonePtr(j.Required)
}

// DeepCopy returns a copy of a, or nil.
func (a *RouteAuth) DeepCopy() *RouteAuth {
	if a == nil {
		return nil
	}
	return &RouteAuth{Required: clonePtr(a.Required), Roles: slices.Clone(a.Roles), RolesAll: slices.Clone(a.RolesAll)}
}

// DeepCopy returns a copy of c, or nil.
func (c *CORS) DeepCopy() *CORS {
	if c == nil {
		return nil
	}
	out := *c
	out.AllowOrigins, out.AllowMethods = slices.Clone(c.AllowOrigins), slices.Clone(c.AllowMethods)
	out.AllowHeaders, out.ExposeHeaders = slices.Clone(c.AllowHeaders), slices.Clone(c.ExposeHeaders)
	return &out
}

// DeepCopy returns a copy of r, or nil.
func (r *RateLimit) DeepCopy() *RateLimit {
	if r == nil {
		return nil
	}
	out := RateLimit{Local: clonePtr(r.Local)}
	if g := r.Global; g != nil {
		out.Global = &GlobalRateLimit{PerClientIP: clonePtr(g.PerClientIP), PerRoute: clonePtr(g.PerRoute)}
	}
	return &out
}

// clonePtr returns a new pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
