package gatewayapi

import (
	"fmt"
	"slices"
	"strings"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// httpRoutes translates the HTTPRoutes attached to our Gateways.
func (b *builder) httpRoutes() {
	for _, hr := range sortedByAge(b.in.HTTPRoutes) {
		rb := b.newRouteBuild(kindHTTPRoute, hr.Namespace, hr.Generation, false)
		var routes []model.Route
		for i, rule := range hr.Spec.Rules {
			routes = append(routes, httpRule(fmt.Sprintf("spec.rules[%d]", i), i, rule, rb)...)
		}
		sortRoutes(routes)
		routes = dedupeRoutes(routes)
		r := route{kind: kindHTTPRoute, namespace: hr.Namespace, gen: hr.Generation, hostnames: hr.Spec.Hostnames, parents: hr.Spec.ParentRefs}
		parents := b.attach(r, rb.ok())
		if len(parents) == 0 {
			continue
		}
		b.noteGateways(routeKey{kindHTTPRoute, nn(hr.Namespace, hr.Name)}, parents)
		b.noteBackendTLS(rb.services, parents)
		rb.accepted(parents)
		res := rb.resolvedRefs()
		st := gatewayv1.HTTPRouteStatus{}
		for _, p := range parents {
			st.Parents = append(st.Parents, parentStatus(p, res))
		}
		b.out.Status.HTTPRoutes[nn(hr.Namespace, hr.Name)] = st
		b.emitServices(routeKey{kindHTTPRoute, nn(hr.Namespace, hr.Name)}, "hr", hr.CreationTimestamp.UTC(), parents, routes, rb.ups)
	}
}

// httpRule maps rule i (at field f) to one model route per match.
func httpRule(f string, i int, rule gatewayv1.HTTPRouteRule, rb *routeBuild) []model.Route {
	filters := httpFilters(f, rule.Filters, rb)
	var targets []model.WeightedTarget
	var failed uint32
	none := false
	if filters.redirect == nil {
		refs := make([]gatewayv1.BackendRef, len(rule.BackendRefs))
		headers := make([]*model.HeaderRules, len(rule.BackendRefs))
		for j, br := range rule.BackendRefs {
			refs[j] = br.BackendRef
			headers[j] = httpBackendFilters(fmt.Sprintf("%s.backendRefs[%d].filters", f, j), br.Filters, rb)
		}
		targets, failed, none = rb.filteredTargets(f, refs, headers)
	}
	// timeouts.request bounds the whole request, backendRequest each
	// request to a backend; alone, backendRequest bounds both, as a
	// request goes to one backend when nothing retries.
	var timeout, backend time.Duration
	if t := rule.Timeouts; t != nil {
		timeout = duration(f+".timeouts.request", t.Request, rb)
		backend = duration(f+".timeouts.backendRequest", t.BackendRequest, rb)
		switch {
		case timeout == 0:
			timeout, backend = backend, 0
		case backend < 0 || (timeout > 0 && backend >= timeout):
			backend = 0 // disabled, or no tighter than the request timeout
		}
	}
	retries := httpRetry(f, rule.Retry, rb)
	sticky := sessionPersistence(f, rule.SessionPersistence, rb)
	matches := rule.Matches
	if len(matches) == 0 {
		matches = []gatewayv1.HTTPRouteMatch{{}}
	}
	var out []model.Route
	for j, m := range matches {
		mf := fmt.Sprintf("%s.matches[%d]", f, j)
		r := model.Route{Name: ruleRouteName(rule.Name, i, j, len(matches)), Targets: targets, FailedWeight: failed, Timeout: timeout, BackendTimeout: backend, Retries: retries, Sticky: sticky,
			WebSocket: rb.upgradesToWebSocket(targets)}
		httpMatch(mf, m, &r, rb)
		filters.apply(&r)
		if none && r.Redirect == nil {
			r.Targets = nil
			r.Responses = mergeDirect(r.Responses)
		}
		if prefixOnly(r) && r.Prefix == "" {
			rb.unsupportedf("%s.filters: ReplacePrefixMatch needs a PathPrefix match", f)
		}
		out = append(out, r)
	}
	return out
}

// prefixOnly reports whether r replaces a matched prefix.
func prefixOnly(r model.Route) bool {
	return (r.Redirect != nil && r.Redirect.Path != nil && r.Redirect.Path.IsPrefix) ||
		(r.URLRewrite != nil && r.URLRewrite.Path != nil && r.URLRewrite.Path.IsPrefix)
}

// mergeDirect makes responses answer 500, keeping their headers.
func mergeDirect(r *model.RouteResponses) *model.RouteResponses {
	out := internalError()
	if r != nil {
		out.Headers = r.Headers
	}
	return out
}

// ruleRouteName names the model route of match j of rule i: the rule's
// name when it has one (policies target rules by it), else "rule-i";
// "-j" added when the rule has several matches.
func ruleRouteName(name *gatewayv1.SectionName, i, j, matches int) string {
	n := fmt.Sprintf("rule-%d", i)
	if name != nil && *name != "" {
		n = string(*name)
	}
	if matches > 1 {
		n += fmt.Sprintf("-%d", j)
	}
	return n
}

// hasHeader reports whether hs matches the header name (lower case).
func hasHeader(hs []model.HeaderMatch, name string) bool {
	return slices.ContainsFunc(hs, func(h model.HeaderMatch) bool { return h.Name == name })
}

// httpMatch sets the path, method, header and query matches of r.
func httpMatch(f string, m gatewayv1.HTTPRouteMatch, r *model.Route, rb *routeBuild) {
	typ, val := gatewayv1.PathMatchPathPrefix, "/"
	if m.Path != nil {
		if m.Path.Type != nil {
			typ = *m.Path.Type
		}
		if m.Path.Value != nil {
			val = *m.Path.Value
		}
	}
	switch typ {
	case gatewayv1.PathMatchExact:
		r.Exact = val
	case gatewayv1.PathMatchPathPrefix:
		r.Prefix, r.SegmentPrefix = val, true // "/foo" matches /foo/bar, not /foobar
	case gatewayv1.PathMatchRegularExpression:
		r.Regex = val
	default:
		rb.unsupportedf("%s.path.type: %q is not supported", f, typ)
	}
	if m.Method != nil {
		r.Method = string(*m.Method)
	}
	for _, h := range m.Headers {
		hm := model.HeaderMatch{Name: strings.ToLower(string(h.Name))}
		if hasHeader(r.Headers, hm.Name) {
			// The spec (HTTPHeaderMatch.Name): "If multiple entries
			// specify equivalent header names, only the first entry with
			// an equivalent name MUST be considered for a match."
			continue
		}
		if h.Type != nil && *h.Type == gatewayv1.HeaderMatchRegularExpression {
			hm.Regex = h.Value
		} else {
			hm.Exact = h.Value
		}
		if hm.Exact == "" && hm.Regex == "" {
			hm.Present = true
		}
		r.Headers = append(r.Headers, hm)
	}
	for _, q := range m.QueryParams {
		qm := model.QueryMatch{Name: string(q.Name)}
		if slices.ContainsFunc(r.Queries, func(x model.QueryMatch) bool { return x.Name == qm.Name }) {
			// HTTPQueryParamMatch.Name: "only the first entry with an
			// equivalent name MUST be considered for a match".
			continue
		}
		if q.Type != nil && *q.Type == gatewayv1.QueryParamMatchRegularExpression {
			qm.Regex = q.Value
		} else {
			qm.Exact = q.Value
		}
		r.Queries = append(r.Queries, qm)
	}
}
