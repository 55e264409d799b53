package gatewayapi

import (
	"fmt"
	"regexp"
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
		sortRoutes(routes)
		routes = dedupeRoutes(routes)
		r := route{kind: kindGRPCRoute, namespace: gr.Namespace, gen: gr.Generation, hostnames: gr.Spec.Hostnames, parents: gr.Spec.ParentRefs}
		parents := b.attach(r, rb.ok())
		if len(parents) == 0 {
			continue
		}
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
	for j, br := range rule.BackendRefs {
		refs[j] = br.BackendRef
		if len(br.Filters) > 0 {
			rb.unsupportedf("%s.backendRefs[%d].filters: filters per backend are not supported", f, j)
		}
	}
	targets, failed, none := rb.targets(f, refs)
	matches := rule.Matches
	if len(matches) == 0 {
		matches = []gatewayv1.GRPCRouteMatch{{}}
	}
	var out []model.Route
	for j, m := range matches {
		r := model.Route{Name: ruleRouteName(rule.Name, i, j, len(matches)), Targets: targets, FailedWeight: failed}
		grpcMatch(m, &r)
		rf.apply(&r)
		if none {
			r.Targets = nil
			r.Responses = mergeDirect(r.Responses)
		}
		out = append(out, r)
	}
	return out
}

// grpcMatch sets the path and header matches of r from a gRPC match.
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
		regex := mm.Type != nil && *mm.Type == gatewayv1.GRPCMethodMatchRegularExpression
		switch {
		case regex:
			r.Prefix, r.Regex = "", "/"+or(svc, "[^/]+")+"/"+or(method, "[^/]+")
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
