package translate

import (
	"slices"
	"strings"

	mutation "github.com/envoyproxy/go-control-plane/envoy/config/common/mutation_rules/v3"
	headermutation "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_mutation/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
)

// identityHeaders returns, sorted and joined by commas (so httpFilters
// stays comparable), the request headers that a gateway function of svcs
// sets from an identity it verified: the JWT claim headers of their
// services and the headers of their sessionInterceptors. Every route of a
// listener serving svcs removes them from the client's request before
// any filter runs, so a client can never pass its own x-user-id to a
// backend, not even on a route of the same host that checks nothing
// (issue 22 item 3).
func identityHeaders(svcs []model.Service) string {
	var hs []string
	for _, s := range svcs {
		if s.JWT != nil {
			for _, h := range s.JWT.ClaimHeaders {
				hs = append(hs, strings.ToLower(h))
			}
		}
		for _, r := range s.Routes {
			hs = append(hs, chain.IdentityHeaders(r.Interceptors)...)
		}
	}
	slices.Sort(hs)
	return strings.Join(slices.Compact(hs), ",")
}

// identityPerRoute is the header_mutation configuration of a route on a
// listener whose identity headers are hs (identityHeaders); nil for none.
func identityPerRoute(hs string) *anypb.Any {
	if hs == "" {
		return nil
	}
	m := &headermutation.Mutations{}
	for _, h := range strings.Split(hs, ",") {
		m.RequestMutations = append(m.RequestMutations, &mutation.HeaderMutation{Action: &mutation.HeaderMutation_Remove{Remove: h}})
	}
	return mustAny(&headermutation.HeaderMutationPerRoute{Mutations: m})
}
