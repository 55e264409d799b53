package gatewayapi

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// Filters on a backendRef (feature HTTPRouteBackendRequestHeaderModification):
// RequestHeaderModifier and ResponseHeaderModifier become the header
// edits of that backend's target (model.WeightedTarget.Headers), which
// Envoy applies on its weighted cluster: only the requests that go to
// that backend are changed. Any other filter type there is refused by
// name (the route's Accepted=False UnsupportedValue).

// httpBackendFilters returns the header edits of an HTTPRoute
// backendRef's filters at field f; nil for none.
func httpBackendFilters(f string, fs []gatewayv1.HTTPRouteFilter, rb *routeBuild) *model.HeaderRules {
	var rf ruleFilters
	for j, flt := range fs {
		switch flt.Type {
		case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
			rf.requestHeaders(flt.RequestHeaderModifier)
		case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
			rf.responseHeaders(flt.ResponseHeaderModifier)
		default:
			rb.unsupportedf("%s[%d].type: filter %q is not supported on a backend (RequestHeaderModifier and ResponseHeaderModifier are)", f, j, flt.Type)
		}
	}
	return rf.headers
}

// grpcBackendFilters is httpBackendFilters of a GRPCRoute backendRef.
func grpcBackendFilters(f string, fs []gatewayv1.GRPCRouteFilter, rb *routeBuild) *model.HeaderRules {
	var rf ruleFilters
	for j, flt := range fs {
		switch flt.Type {
		case gatewayv1.GRPCRouteFilterRequestHeaderModifier:
			rf.requestHeaders(flt.RequestHeaderModifier)
		case gatewayv1.GRPCRouteFilterResponseHeaderModifier:
			rf.responseHeaders(flt.ResponseHeaderModifier)
		default:
			rb.unsupportedf("%s[%d].type: filter %q is not supported on a backend (RequestHeaderModifier and ResponseHeaderModifier are)", f, j, flt.Type)
		}
	}
	return rf.headers
}
