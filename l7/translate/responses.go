package translate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// ServerHeader is the response header Envoy would announce itself in; the
// gateway never sends it (see hideServerHeader).
const ServerHeader = "server"

// applyResponses completes a service's built route with its response
// settings, for a listener speaking f.proto and running the filters f
// ("" and none for proxyless gRPC clients, which get only what changes the
// route's action). In order of precedence, the route's action becomes: a
// 301 to https:// on an HTTP listener when the route redirects; the
// maintenance answer when the route is in maintenance; its direct
// response. A redirect or a maintenance answer is given before any of
// the route's functions runs (its per-filter configuration is that of a
// route asking for none: no token, interceptor, rate limit or error page
// stands in the way); a direct response keeps them. Header rules (the
// service's, then the route's) and, on HTTPS listeners, the service's
// strict-transport-security header go on the route itself, never on the
// virtual host: a host may hold routes of several services (delegations),
// and one service's settings must not reach another's routes.
func applyResponses(rt *route.Route, s model.Service, r model.Route, f httpFilters) *route.Route {
	proto := f.proto
	var d *route.DirectResponseAction
	var extra []*core.HeaderValueOption
	switch m, dr := model.EffectiveMaintenance(s, r), model.DirectResponseOf(r); {
	case proto == model.HTTP && model.EffectiveRedirectHTTPS(s, r):
		rt.Action = &route.Route_Redirect{Redirect: &route.RedirectAction{
			SchemeRewriteSpecifier: &route.RedirectAction_HttpsRedirect{HttpsRedirect: true},
			ResponseCode:           route.RedirectAction_MOVED_PERMANENTLY,
		}}
		rt.TypedPerFilterConfig = f.perRoute(model.Service{Name: s.Name}, model.Route{})
	case m != nil:
		rt.TypedPerFilterConfig = f.perRoute(model.Service{Name: s.Name}, model.Route{})
		d = &route.DirectResponseAction{Status: m.Status, Body: inline(m.Body)}
		extra = append(extra, overwrite("content-type", m.ContentType))
		if m.RetryAfter > 0 {
			extra = append(extra, overwrite("retry-after", strconv.FormatInt(int64(m.RetryAfter/time.Second), 10)))
		}
	case dr != nil:
		d = &route.DirectResponseAction{Status: dr.Status}
		if dr.Body != "" {
			d.Body = inline(dr.Body)
			ct := dr.ContentType
			if ct == "" {
				ct = model.DefaultContentType
			}
			extra = append(extra, overwrite("content-type", ct))
		}
	}
	if d != nil {
		rt.Action = &route.Route_DirectResponse{DirectResponse: d}
	}
	if proto == "" {
		return rt
	}
	for _, h := range []*model.HeaderRules{serviceHeaders(s), routeHeaders(r)} {
		if h == nil {
			continue
		}
		rt.RequestHeadersToRemove = append(rt.RequestHeadersToRemove, h.Request.Remove...)
		rt.RequestHeadersToAdd = append(rt.RequestHeadersToAdd, headerOptions(h.Request)...)
		rt.ResponseHeadersToRemove = append(rt.ResponseHeadersToRemove, h.Response.Remove...)
		rt.ResponseHeadersToAdd = append(rt.ResponseHeadersToAdd, headerOptions(h.Response)...)
	}
	rt.ResponseHeadersToAdd = append(rt.ResponseHeadersToAdd, extra...)
	if hsts := model.EffectiveHSTS(s); hsts != nil && proto == model.HTTPS {
		rt.ResponseHeadersToAdd = append(rt.ResponseHeadersToAdd, overwrite(model.HSTSHeader, HSTSValue(*hsts)))
		setHSTSMetadata(rt, HSTSValue(*hsts))
	}
	return rt
}

// HSTSValue is the strict-transport-security header value of h.
func HSTSValue(h model.HSTS) string {
	v := []string{fmt.Sprintf("max-age=%d", int64(h.MaxAge/time.Second))}
	if h.IncludeSubDomains {
		v = append(v, "includeSubDomains")
	}
	if h.Preload {
		v = append(v, "preload")
	}
	return strings.Join(v, "; ")
}

// hideServerHeader makes a gateway listener's route configuration drop
// an upstream's server header from every response; the connection
// manager's PASS_THROUGH (see hcmFilter) keeps Envoy from adding its own.
func hideServerHeader(rc *route.RouteConfiguration) *route.RouteConfiguration {
	rc.ResponseHeadersToRemove = append(rc.ResponseHeadersToRemove, ServerHeader)
	return rc
}

func serviceHeaders(s model.Service) *model.HeaderRules {
	if s.Responses == nil {
		return nil
	}
	return s.Responses.Headers
}

func routeHeaders(r model.Route) *model.HeaderRules {
	if r.Responses == nil {
		return nil
	}
	return r.Responses.Headers
}

// headerOptions is Set (overwrite) then Add (append), each sorted by name.
func headerOptions(e model.HeaderEdits) []*core.HeaderValueOption {
	var out []*core.HeaderValueOption
	for _, k := range slices.Sorted(maps.Keys(e.Set)) {
		out = append(out, overwrite(k, e.Set[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(e.Add)) {
		out = append(out, &core.HeaderValueOption{
			Header:       &core.HeaderValue{Key: k, Value: e.Add[k]},
			AppendAction: core.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD,
		})
	}
	return out
}

func overwrite(k, v string) *core.HeaderValueOption {
	return &core.HeaderValueOption{
		Header:       &core.HeaderValue{Key: k, Value: v},
		AppendAction: core.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}

func inline(body string) *core.DataSource {
	return &core.DataSource{Specifier: &core.DataSource_InlineString{InlineString: body}}
}
