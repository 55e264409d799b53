package kube

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
)

// The Service annotations of the response functions: each is the DSL key
// of the same name, as strict JSON (unknown keys are errors), checked
// with the service by model.CheckService.
const (
	// AnnotationRequestHeaders changes the headers sent upstream (DSL
	// requestHeaders), e.g. `{"set":{"x-env":"prod"},"remove":["x-debug"]}`.
	AnnotationRequestHeaders = "tlb.io/l7-request-headers"
	// AnnotationResponseHeaders changes the headers sent to clients (DSL
	// responseHeaders), e.g. `{"set":{"x-frame-options":"DENY"}}`.
	AnnotationResponseHeaders = "tlb.io/l7-response-headers"
	// AnnotationHSTS changes the strict-transport-security header of an
	// HTTPS listener (DSL hsts), e.g. `{"maxAge":"8760h","includeSubDomains":true}`
	// or `{"disabled":true}`.
	AnnotationHSTS = "tlb.io/l7-hsts"
	// AnnotationErrorPages replaces the bodies of chosen statuses (DSL
	// errorPages), e.g. `[{"statuses":[503],"body":"<h1>Back soon</h1>","contentType":"text/html"}]`.
	AnnotationErrorPages = "tlb.io/l7-error-pages"
	// AnnotationMaintenance answers every request from the gateway while
	// enabled (DSL maintenance), e.g. `{"enabled":true,"retryAfter":"10m"}`.
	AnnotationMaintenance = "tlb.io/l7-maintenance"
	// AnnotationDirectResponse makes the Service's route answer itself
	// (DSL routes[0].directResponse; the route then has no target), e.g.
	// `{"status":200,"body":"ok"}`.
	AnnotationDirectResponse = "tlb.io/l7-direct-response"
	// AnnotationRedirectHTTPS "true" makes the Service's route answer 301
	// to https:// on HTTP listeners (DSL redirectHTTPS).
	AnnotationRedirectHTTPS = "tlb.io/l7-redirect-https"
)

// responseIntent is what the response annotations ask for.
type responseIntent struct {
	service *model.ServiceResponses
	direct  *model.DirectResponse
}

// parseResponses reads the response annotations; bad is called once per
// invalid annotation.
func parseResponses(ann map[string]string, bad func(annotation, msg string)) responseIntent {
	var d struct {
		req, resp *dsl.HeaderEditsDoc
		hsts      *dsl.HSTSDoc
		pages     []dsl.ErrorPageDoc
		maint     *dsl.MaintenanceDoc
		direct    *dsl.DirectResponseDoc
	}
	decode := func(annotation, example string, v any) bool {
		raw, ok := ann[annotation]
		if !ok {
			return false
		}
		if err := dsl.DecodeStrict(raw, v); err != nil {
			bad(annotation, fmt.Sprintf("%q: %v; want JSON such as %s", raw, err, example))
			return false
		}
		return true
	}
	var out responseIntent
	sr := &model.ServiceResponses{}
	set := decode(AnnotationRequestHeaders, `{"set":{"x-env":"prod"},"remove":["x-debug"]}`, &d.req)
	if decode(AnnotationResponseHeaders, `{"set":{"x-frame-options":"DENY"}}`, &d.resp) {
		set = true
	}
	if d.req != nil || d.resp != nil {
		sr.Headers = &model.HeaderRules{Request: d.req.ToModel(), Response: d.resp.ToModel()}
	}
	if decode(AnnotationHSTS, `{"maxAge":"8760h","includeSubDomains":true}`, &d.hsts) && d.hsts != nil {
		sr.HSTS = d.hsts.ToModel("hsts", func(f, msg string) { bad(AnnotationHSTS, f+": "+msg) })
		set = true
	}
	if decode(AnnotationErrorPages, `[{"statuses":[503],"body":"<h1>Back soon</h1>","contentType":"text/html"}]`, &d.pages) {
		sr.ErrorPages = dsl.ErrorPagesModel(d.pages)
		set = true
	}
	if decode(AnnotationMaintenance, `{"enabled":true,"retryAfter":"10m"}`, &d.maint) && d.maint != nil {
		sr.Maintenance = d.maint.ToModel("maintenance", func(f, msg string) { bad(AnnotationMaintenance, f+": "+msg) })
		set = true
	}
	if decode(AnnotationDirectResponse, `{"status":200,"body":"ok"}`, &d.direct) {
		out.direct = d.direct.ToModel()
	}
	if v, ok := ann[AnnotationRedirectHTTPS]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(AnnotationRedirectHTTPS, fmt.Sprintf("%q is not a boolean; set \"true\" or \"false\"", v))
		}
		sr.RedirectHTTPS = b
		set = true
	}
	if set {
		out.service = sr
	}
	return out
}

// apply gives the Service its response settings; a direct response
// replaces the route's target.
func (in responseIntent) apply(s *model.Service) {
	s.Responses = in.service
	if in.direct != nil && len(s.Routes) > 0 {
		s.Routes[0].Targets = nil
		s.Routes[0].Responses = &model.RouteResponses{DirectResponse: in.direct}
	}
}

// responseAnnotation maps a model field of the response settings to its
// annotation, or "".
func responseAnnotation(field string) string {
	for prefix, a := range map[string]string{
		"requestHeaders": AnnotationRequestHeaders, "responseHeaders": AnnotationResponseHeaders,
		"hsts": AnnotationHSTS, "errorPages": AnnotationErrorPages, "maintenance": AnnotationMaintenance,
		"routes[0].directResponse": AnnotationDirectResponse,
	} {
		if field == prefix || strings.HasPrefix(field, prefix+".") || strings.HasPrefix(field, prefix+"[") {
			return a
		}
	}
	return ""
}
