package gatewayapi

import (
	"fmt"
	"strings"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// headerEdits maps a header filter to the model's edits (names in lower
// case, as the model wants).
func headerEdits(h *gatewayv1.HTTPHeaderFilter) model.HeaderEdits {
	var e model.HeaderEdits
	if h == nil {
		return e
	}
	for _, s := range h.Set {
		if e.Set == nil {
			e.Set = map[string]string{}
		}
		e.Set[strings.ToLower(string(s.Name))] = s.Value
	}
	for _, a := range h.Add {
		if e.Add == nil {
			e.Add = map[string]string{}
		}
		e.Add[strings.ToLower(string(a.Name))] = a.Value
	}
	for _, r := range h.Remove {
		e.Remove = append(e.Remove, strings.ToLower(r))
	}
	return e
}

// ruleFilters is what a rule's filters do to each of its model routes.
type ruleFilters struct {
	headers    *model.HeaderRules
	redirect   *model.Redirect
	urlRewrite *model.URLRewrite
	mirrors    []model.Mirror
	cors       *model.CORSPolicy
}

// apply sets the filters on r.
func (rf ruleFilters) apply(r *model.Route) {
	if rf.headers != nil {
		if r.Responses == nil {
			r.Responses = &model.RouteResponses{}
		}
		h := *rf.headers
		r.Responses.Headers = &h
	}
	r.Redirect, r.URLRewrite = rf.redirect, rf.urlRewrite
	r.Mirrors = append([]model.Mirror(nil), rf.mirrors...)
	r.CORS = rf.cors
}

// requestHeaders and responseHeaders set one direction's edits.
func (rf *ruleFilters) requestHeaders(h *gatewayv1.HTTPHeaderFilter) {
	if rf.headers == nil {
		rf.headers = &model.HeaderRules{}
	}
	rf.headers.Request = headerEdits(h)
}

func (rf *ruleFilters) responseHeaders(h *gatewayv1.HTTPHeaderFilter) {
	if rf.headers == nil {
		rf.headers = &model.HeaderRules{}
	}
	rf.headers.Response = headerEdits(h)
}

// mirror adds a request mirror to a resolved backend.
func (rf *ruleFilters) mirror(f string, m *gatewayv1.HTTPRequestMirrorFilter, rb *routeBuild) {
	if m == nil {
		rb.unsupportedf("%s.requestMirror: missing", f)
		return
	}
	up, ok := rb.backend(f+".requestMirror.backendRef", m.BackendRef)
	if !ok {
		return
	}
	pct := uint32(0)
	switch {
	case m.Percent != nil:
		pct = uint32(*m.Percent)
	case m.Fraction != nil:
		den := int32(100)
		if m.Fraction.Denominator != nil {
			den = *m.Fraction.Denominator
		}
		if den <= 0 {
			rb.unsupportedf("%s.requestMirror.fraction.denominator: must be positive", f)
			return
		}
		// The model mirrors whole percents: round up so a small share
		// still mirrors some requests.
		pct = uint32((int64(m.Fraction.Numerator)*100 + int64(den) - 1) / int64(den))
	}
	if pct == 0 && (m.Percent != nil || m.Fraction != nil) {
		return
	}
	if pct > 100 {
		rb.unsupportedf("%s.requestMirror: more than 100%%", f)
		return
	}
	if pct == 100 {
		pct = 0
	}
	rf.mirrors = append(rf.mirrors, model.Mirror{Upstream: up, Percent: pct})
}

// pathModifier maps a redirect's or rewrite's path.
func pathModifier(f string, p *gatewayv1.HTTPPathModifier, rb *routeBuild) *model.PathModifier {
	if p == nil {
		return nil
	}
	switch p.Type {
	case gatewayv1.FullPathHTTPPathModifier:
		if p.ReplaceFullPath == nil {
			rb.unsupportedf("%s.replaceFullPath: missing", f)
			return nil
		}
		return &model.PathModifier{Full: *p.ReplaceFullPath}
	case gatewayv1.PrefixMatchHTTPPathModifier:
		if p.ReplacePrefixMatch == nil {
			rb.unsupportedf("%s.replacePrefixMatch: missing", f)
			return nil
		}
		return &model.PathModifier{IsPrefix: true, ReplacePrefix: *p.ReplacePrefixMatch}
	}
	rb.unsupportedf("%s.type: %q is not supported", f, p.Type)
	return nil
}

// httpFilters maps an HTTPRoute rule's filters at field f.
func httpFilters(f string, fs []gatewayv1.HTTPRouteFilter, rb *routeBuild) ruleFilters {
	var rf ruleFilters
	for i, flt := range fs {
		ff := fmt.Sprintf("%s.filters[%d]", f, i)
		switch flt.Type {
		case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
			rf.requestHeaders(flt.RequestHeaderModifier)
		case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
			rf.responseHeaders(flt.ResponseHeaderModifier)
		case gatewayv1.HTTPRouteFilterRequestMirror:
			rf.mirror(ff, flt.RequestMirror, rb)
		case gatewayv1.HTTPRouteFilterRequestRedirect:
			rf.redirect = redirect(ff, flt.RequestRedirect, rb)
		case gatewayv1.HTTPRouteFilterURLRewrite:
			if u := flt.URLRewrite; u != nil {
				rf.urlRewrite = &model.URLRewrite{Path: pathModifier(ff+".urlRewrite.path", u.Path, rb)}
				if u.Hostname != nil {
					rf.urlRewrite.Hostname = string(*u.Hostname)
				}
			}
		case gatewayv1.HTTPRouteFilterCORS:
			rf.cors = corsFilter(ff+".cors", flt.CORS, rb)
		default:
			rb.unsupportedf("%s.type: filter %q is not supported", ff, flt.Type)
		}
	}
	if rf.redirect != nil && rf.urlRewrite != nil {
		rb.unsupportedf("%s.filters: RequestRedirect and URLRewrite cannot be combined", f)
	}
	return rf
}

// redirect maps a RequestRedirect filter.
func redirect(f string, r *gatewayv1.HTTPRequestRedirectFilter, rb *routeBuild) *model.Redirect {
	if r == nil {
		rb.unsupportedf("%s.requestRedirect: missing", f)
		return nil
	}
	out := &model.Redirect{Path: pathModifier(f+".requestRedirect.path", r.Path, rb)}
	if r.Scheme != nil {
		out.Scheme = *r.Scheme
	}
	if r.Hostname != nil {
		out.Hostname = string(*r.Hostname)
	}
	if r.Port != nil {
		out.Port = uint32(*r.Port)
	}
	if r.StatusCode != nil {
		if !model.RedirectCode(*r.StatusCode) {
			rb.unsupportedf("%s.requestRedirect.statusCode: %d is not supported; use 301, 302, 303, 307 or 308", f, *r.StatusCode)
		}
		out.StatusCode = *r.StatusCode
	}
	return out
}

// corsFilter maps a CORS filter to the route's cross-origin policy. The
// model allows "*", exact origins and a wildcard in front of the host
// ("https://*.example.com"); a wildcard elsewhere is refused.
func corsFilter(f string, c *gatewayv1.HTTPCORSFilter, rb *routeBuild) *model.CORSPolicy {
	if c == nil {
		rb.unsupportedf("%s: missing", f)
		return nil
	}
	p := &model.CORSPolicy{MaxAge: time.Duration(c.MaxAge) * time.Second}
	if c.AllowCredentials != nil {
		p.Credentials = *c.AllowCredentials
	}
	for i, o := range c.AllowOrigins {
		if o != "*" && strings.Contains(strings.Replace(string(o), "://*.", "://", 1), "*") {
			rb.unsupportedf("%s.allowOrigins[%d]: a wildcard is supported as the whole origin (\"*\") or in front of the host (https://*.example.com), not in %q", f, i, o)
		}
		p.Origins = append(p.Origins, strings.ToLower(string(o)))
	}
	for _, m := range c.AllowMethods {
		p.Methods = append(p.Methods, string(m))
	}
	for _, h := range c.AllowHeaders {
		p.Headers = append(p.Headers, string(h))
	}
	for _, h := range c.ExposeHeaders {
		p.ExposeHeaders = append(p.ExposeHeaders, string(h))
	}
	return p
}
