package gatewayapi

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// grpcRoutes translates the GRPCRoutes attached to our Gateways: method
// matches become path matches ("/service/method"), upstreams speak
// HTTP/2.
func (b *builder) grpcRoutes() {
	for _, gr := range sortedByAge(b.in.GRPCRoutes) {
		rb := b.newRouteBuild(kindGRPCRoute, gr.Namespace, gr.Generation, true)
		var routes []model.Route
		for i, rule := range gr.Spec.Rules {
			routes = append(routes, grpcRule(fmt.Sprintf("spec.rules[%d]", i), i, rule, rb)...)
		}
		sortGRPCRoutes(routes)
		routes = dedupeRoutes(routes)
		r := route{kind: kindGRPCRoute, namespace: gr.Namespace, gen: gr.Generation, hostnames: gr.Spec.Hostnames, parents: gr.Spec.ParentRefs}
		parents := b.attach(r, rb.ok())
		if len(parents) == 0 {
			continue
		}
		b.noteGateways(routeKey{kindGRPCRoute, nn(gr.Namespace, gr.Name)}, parents)
		b.noteBackendTLS(rb.services, parents)
		rb.accepted(parents)
		res := rb.resolvedRefs()
		st := gatewayv1.GRPCRouteStatus{}
		for _, p := range parents {
			st.Parents = append(st.Parents, parentStatus(p, res))
		}
		b.out.Status.GRPCRoutes[nn(gr.Namespace, gr.Name)] = st
		b.emitServices(routeKey{kindGRPCRoute, nn(gr.Namespace, gr.Name)}, "gr", gr.CreationTimestamp.UTC(), parents, routes, rb.ups)
	}
}

// grpcRule maps rule i (at field f) to one model route per match.
func grpcRule(f string, i int, rule gatewayv1.GRPCRouteRule, rb *routeBuild) []model.Route {
	var rf ruleFilters
	for j, flt := range rule.Filters {
		ff := fmt.Sprintf("%s.filters[%d]", f, j)
		switch flt.Type {
		case gatewayv1.GRPCRouteFilterRequestHeaderModifier:
			rf.requestHeaders(flt.RequestHeaderModifier)
		case gatewayv1.GRPCRouteFilterResponseHeaderModifier:
			rf.responseHeaders(flt.ResponseHeaderModifier)
		case gatewayv1.GRPCRouteFilterRequestMirror:
			rf.mirror(ff, flt.RequestMirror, rb)
		default:
			rb.unsupportedf("%s.type: filter %q is not supported", ff, flt.Type)
		}
	}
	refs := make([]gatewayv1.BackendRef, len(rule.BackendRefs))
	headers := make([]*model.HeaderRules, len(rule.BackendRefs))
	for j, br := range rule.BackendRefs {
		refs[j] = br.BackendRef
		headers[j] = grpcBackendFilters(fmt.Sprintf("%s.backendRefs[%d].filters", f, j), br.Filters, rb)
	}
	targets, failed, none := rb.filteredTargets(f, refs, headers)
	matches := rule.Matches
	if len(matches) == 0 {
		matches = []gatewayv1.GRPCRouteMatch{{}}
	}
	var out []model.Route
	for j, m := range matches {
		r := model.Route{Name: ruleRouteName(rule.Name, i, j, len(matches)), Targets: targets, FailedWeight: failed}
		if failed > 0 {
			r.FailedStatus = unavailable
		}
		grpcMatch(m, &r)
		rf.apply(&r)
		if none {
			r.Targets = nil
			r.Responses = mergeDirect(r.Responses)
			r.Responses.DirectResponse.Status = unavailable
		}
		out = append(out, r)
	}
	return out
}

// unavailable is the HTTP status a GRPCRoute answers for invalid
// backends: gRPC clients read 503 as UNAVAILABLE. The spec
// (GRPCRouteRule.BackendRefs): "When a GRPCBackendRef is invalid,
// `UNAVAILABLE` statuses MUST be returned for requests that would have
// otherwise been routed to an invalid backend."
const unavailable = 503

// grpcMatch sets the path and header matches of r from a gRPC match, and
// its precedence among the routes of its host.
func grpcMatch(m gatewayv1.GRPCRouteMatch, r *model.Route) {
	r.Prefix = "/"
	if mm := m.Method; mm != nil {
		svc, method := "", ""
		if mm.Service != nil {
			svc = *mm.Service
		}
		if mm.Method != nil {
			method = *mm.Method
		}
		r.Precedence = model.GRPCPrecedence(svc, method)
		regex := mm.Type != nil && *mm.Type == gatewayv1.GRPCMethodMatchRegularExpression
		switch {
		case regex:
			// Each pattern matches its own field (GRPCMethodMatch: "Value
			// of the service to match against"): grouped, "a|b" stays
			// within the service instead of splitting the whole path.
			r.Prefix, r.Regex = "", "/(?:"+or(svc, "[^/]+")+")/(?:"+or(method, "[^/]+")+")"
		case svc != "" && method != "":
			r.Prefix, r.Exact = "", "/"+svc+"/"+method
		case svc != "":
			r.Prefix = "/" + svc + "/"
		case method != "":
			r.Prefix, r.Regex = "", "/[^/]+/"+regexp.QuoteMeta(method)
		}
	}
	for _, h := range m.Headers {
		hm := model.HeaderMatch{Name: strings.ToLower(string(h.Name))}
		if hasHeader(r.Headers, hm.Name) {
			// GRPCHeaderMatch.Name: "only the first entry with an
			// equivalent name MUST be considered for a match".
			continue
		}
		if h.Type != nil && *h.Type == gatewayv1.GRPCHeaderMatchRegularExpression {
			hm.Regex = h.Value
		} else {
			hm.Exact = h.Value
		}
		r.Headers = append(r.Headers, hm)
	}
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// sortGRPCRoutes orders the routes of one GRPCRoute as the spec asks
// (GRPCRouteRule.Matches): by the characters of the service they match,
// then of the method, then by header matches. Ties keep rule order.
func sortGRPCRoutes(rs []model.Route) {
	slices.SortStableFunc(rs, func(a, b model.Route) int {
		return cmp.Or(cmp.Compare(b.Precedence, a.Precedence), cmp.Compare(len(b.Headers), len(a.Headers)))
	})
}
