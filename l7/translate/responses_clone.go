package translate

import (
	"maps"
	"slices"

	"github.com/tlbproject/tlb/l7/model"
)

// cloneServiceResponses deep-copies a service's response settings, so an
// in-place change by the caller is seen as a change; nil stays nil.
func cloneServiceResponses(r *model.ServiceResponses) *model.ServiceResponses {
	if r == nil {
		return nil
	}
	c := *r
	c.Headers = cloneHeaderRules(r.Headers)
	if r.HSTS != nil {
		h := *r.HSTS
		c.HSTS = &h
	}
	c.ErrorPages = cloneErrorPages(r.ErrorPages)
	c.Maintenance = clonePtr(r.Maintenance)
	return &c
}

// cloneRouteResponses deep-copies a route's response settings.
func cloneRouteResponses(r *model.RouteResponses) *model.RouteResponses {
	if r == nil {
		return nil
	}
	c := *r
	c.Headers = cloneHeaderRules(r.Headers)
	c.ErrorPages = cloneErrorPages(r.ErrorPages)
	c.Maintenance = clonePtr(r.Maintenance)
	c.DirectResponse = clonePtr(r.DirectResponse)
	c.RedirectHTTPS = clonePtr(r.RedirectHTTPS)
	return &c
}

func cloneHeaderRules(h *model.HeaderRules) *model.HeaderRules {
	if h == nil {
		return nil
	}
	edits := func(e model.HeaderEdits) model.HeaderEdits {
		return model.HeaderEdits{Set: maps.Clone(e.Set), Add: maps.Clone(e.Add), Remove: slices.Clone(e.Remove)}
	}
	return &model.HeaderRules{Request: edits(h.Request), Response: edits(h.Response)}
}

// cloneErrorPages keeps nil and empty apart (a route's empty list opts
// out of its service's pages).
func cloneErrorPages(ps []model.ErrorPage) []model.ErrorPage {
	if ps == nil {
		return nil
	}
	out := make([]model.ErrorPage, len(ps))
	for i, p := range ps {
		p.Statuses = slices.Clone(p.Statuses)
		out[i] = p
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// sameRoutes reports whether a and b build the same routes on every
// listener: they differ at most in their upstreams (endpoints, health),
// which routes do not read.
func sameRoutes(a, b model.Service) bool {
	a.Upstreams, b.Upstreams = nil, nil
	return a.Equal(&b)
}
