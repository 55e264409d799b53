package translate

import (
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// targetHeaders puts the header edits of one target of a route (Gateway
// API backendRefs[].filters) on its weighted cluster: Envoy applies them
// to the requests that go there and to their answers, before the
// route's own edits.
func targetHeaders(cw *route.WeightedCluster_ClusterWeight, h *model.HeaderRules) *route.WeightedCluster_ClusterWeight {
	if h == nil {
		return cw
	}
	cw.RequestHeadersToRemove = append(cw.RequestHeadersToRemove, h.Request.Remove...)
	cw.RequestHeadersToAdd = append(cw.RequestHeadersToAdd, headerOptions(h.Request)...)
	cw.ResponseHeadersToRemove = append(cw.ResponseHeadersToRemove, h.Response.Remove...)
	cw.ResponseHeadersToAdd = append(cw.ResponseHeadersToAdd, headerOptions(h.Response)...)
	return cw
}
