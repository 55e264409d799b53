package kube

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
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
	set := decode(api.AnnotationL7RequestHeaders, `{"set":{"x-env":"prod"},"remove":["x-debug"]}`, &d.req)
	if decode(api.AnnotationL7ResponseHeaders, `{"set":{"x-frame-options":"DENY"}}`, &d.resp) {
		set = true
	}
	if d.req != nil || d.resp != nil {
		sr.Headers = &model.HeaderRules{Request: d.req.ToModel(), Response: d.resp.ToModel()}
	}
	if decode(api.AnnotationL7HSTS, `{"maxAge":"8760h","includeSubDomains":true}`, &d.hsts) && d.hsts != nil {
		sr.HSTS = d.hsts.ToModel("hsts", func(f, msg string) { bad(api.AnnotationL7HSTS, f+": "+msg) })
		set = true
	}
	if decode(api.AnnotationL7ErrorPages, `[{"statuses":[503],"body":"<h1>Back soon</h1>","contentType":"text/html"}]`, &d.pages) {
		sr.ErrorPages = dsl.ErrorPagesModel(d.pages)
		set = true
	}
	if decode(api.AnnotationL7Maintenance, `{"enabled":true,"retryAfter":"10m"}`, &d.maint) && d.maint != nil {
		sr.Maintenance = d.maint.ToModel("maintenance", func(f, msg string) { bad(api.AnnotationL7Maintenance, f+": "+msg) })
		set = true
	}
	if decode(api.AnnotationL7DirectResponse, `{"status":200,"body":"ok"}`, &d.direct) {
		out.direct = d.direct.ToModel()
	}
	if v, ok := ann[api.AnnotationL7RedirectHTTPS]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(api.AnnotationL7RedirectHTTPS, fmt.Sprintf("%q is not a boolean; set \"true\" or \"false\"", v))
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
		"requestHeaders": api.AnnotationL7RequestHeaders, "responseHeaders": api.AnnotationL7ResponseHeaders,
		"hsts": api.AnnotationL7HSTS, "errorPages": api.AnnotationL7ErrorPages, "maintenance": api.AnnotationL7Maintenance,
		"routes[0].directResponse": api.AnnotationL7DirectResponse,
	} {
		if field == prefix || strings.HasPrefix(field, prefix+".") || strings.HasPrefix(field, prefix+"[") {
			return a
		}
	}
	return ""
}
