package kube

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/policy"
)

// responseIntent is what the response annotations ask for.
type responseIntent struct {
	service *model.ServiceResponses
	direct  *model.DirectResponse
}

// responses reads the response annotations (the fields of
// api.ServiceResponses, and a route's api.DirectResponse).
func (a annotations) responses() responseIntent {
	var in api.ServiceResponses
	var direct *api.DirectResponse
	set := a.decode(api.AnnotationL7RequestHeaders, `{"set":{"x-env":"prod"},"remove":["x-debug"]}`, &in.RequestHeaders)
	set = a.decode(api.AnnotationL7ResponseHeaders, `{"set":{"x-frame-options":"DENY"}}`, &in.ResponseHeaders) || set
	set = a.decode(api.AnnotationL7HSTS, `{"maxAge":"8760h","includeSubDomains":true}`, &in.HSTS) && in.HSTS != nil || set
	set = a.decode(api.AnnotationL7ErrorPages, `[{"statuses":[503],"body":"<h1>Back soon</h1>","contentType":"text/html"}]`, &in.ErrorPages) || set
	set = a.decode(api.AnnotationL7Maintenance, `{"enabled":true,"retryAfter":"10m"}`, &in.Maintenance) && in.Maintenance != nil || set
	var out responseIntent
	if a.decode(api.AnnotationL7DirectResponse, `{"status":200,"body":"ok"}`, &direct) {
		out.direct = policy.DirectResponse(direct)
	}
	if v, ok := a.ann[api.AnnotationL7RedirectHTTPS]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			a.bad(api.AnnotationL7RedirectHTTPS, fmt.Sprintf("%q is not a boolean; set \"true\" or \"false\"", v))
		}
		in.RedirectHTTPS = b
		set = true
	}
	if !set {
		return out
	}
	sr, err := policy.ServiceResponses(in)
	for _, fe := range policy.Fields(err) {
		a.bad(responseAnnotation(fe.Field), fe.Error())
	}
	if sr == nil {
		sr = &model.ServiceResponses{} // redirect-https "false" is still set
	}
	out.service = sr
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
