package policy

import (
	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// ServiceResponses converts a service's response keys; nil when none is
// set. Their values are checked by model.CheckService.
func ServiceResponses(in api.ServiceResponses) (*model.ServiceResponses, error) {
	if in.RequestHeaders == nil && in.ResponseHeaders == nil && in.HSTS == nil && in.ErrorPages == nil && in.Maintenance == nil && !in.RedirectHTTPS {
		return nil, nil
	}
	var es Errors
	r := &model.ServiceResponses{
		Headers:       HeaderRules(in.RequestHeaders, in.ResponseHeaders),
		ErrorPages:    ErrorPages(in.ErrorPages),
		RedirectHTTPS: in.RedirectHTTPS,
	}
	var err error
	r.HSTS, err = HSTS(in.HSTS)
	es.nest("hsts", err)
	r.Maintenance, err = Maintenance(in.Maintenance)
	es.nest("maintenance", err)
	return r, es.err()
}

// RouteResponses converts a route's response keys; nil when none is set.
func RouteResponses(in api.RouteResponses) (*model.RouteResponses, error) {
	if in == (api.RouteResponses{}) {
		return nil, nil
	}
	var es Errors
	r := &model.RouteResponses{
		Headers:        HeaderRules(in.RequestHeaders, in.ResponseHeaders),
		DirectResponse: DirectResponse(in.DirectResponse),
		RedirectHTTPS:  in.RedirectHTTPS,
	}
	var err error
	r.Maintenance, err = Maintenance(in.Maintenance)
	es.nest("maintenance", err)
	if in.ErrorPages != nil {
		r.ErrorPages = ErrorPages(*in.ErrorPages)
		if r.ErrorPages == nil {
			r.ErrorPages = []model.ErrorPage{} // errorPages: [] opts out of the service's
		}
	}
	return r, es.err()
}

// HeaderRules joins requestHeaders and responseHeaders; nil when neither
// is set.
func HeaderRules(req, resp *api.HeaderEdits) *model.HeaderRules {
	if req == nil && resp == nil {
		return nil
	}
	return &model.HeaderRules{Request: headerEdits(req), Response: headerEdits(resp)}
}

func headerEdits(e *api.HeaderEdits) model.HeaderEdits {
	if e == nil {
		return model.HeaderEdits{}
	}
	return model.HeaderEdits{Set: e.Set, Add: e.Add, Remove: e.Remove}
}

// HSTS converts an hsts block; nil stays nil.
func HSTS(in *api.HSTS) (*model.HSTS, error) {
	if in == nil {
		return nil, nil
	}
	var es Errors
	h := &model.HSTS{Disabled: in.Disabled, IncludeSubDomains: in.IncludeSubDomains, Preload: in.Preload,
		MaxAge: es.positivePtr("maxAge", in.MaxAge, "8760h")}
	return h, es.err()
}

// ErrorPages converts errorPages; none is nil.
func ErrorPages(in []api.ErrorPage) []model.ErrorPage {
	var out []model.ErrorPage
	for _, p := range in {
		out = append(out, model.ErrorPage{Statuses: p.Statuses, Body: p.Body, ContentType: p.ContentType})
	}
	return out
}

// Maintenance converts a maintenance block; nil stays nil.
func Maintenance(in *api.Maintenance) (*model.Maintenance, error) {
	if in == nil {
		return nil, nil
	}
	var es Errors
	m := &model.Maintenance{Enabled: in.Enabled, Status: in.Status, Body: in.Body, ContentType: in.ContentType,
		RetryAfter: es.positivePtr("retryAfter", in.RetryAfter, "10m")}
	return m, es.err()
}

// DirectResponse converts a directResponse block; nil stays nil.
func DirectResponse(in *api.DirectResponse) *model.DirectResponse {
	if in == nil {
		return nil
	}
	return &model.DirectResponse{Status: in.Status, Body: in.Body, ContentType: in.ContentType}
}
