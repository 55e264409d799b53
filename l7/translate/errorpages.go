package translate

import (
	"fmt"
	"strconv"

	xdscore "github.com/cncf/xds/go/xds/core/v3"
	xdsmatcher "github.com/cncf/xds/go/xds/type/matcher/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	customresponse "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/custom_response/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	localresponse "github.com/envoyproxy/go-control-plane/envoy/extensions/http/custom_response/local_response_policy/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/model"
)

// CustomResponseFilter is the HTTP filter name of Envoy's custom_response
// filter, the key of a route's error pages.
const CustomResponseFilter = "envoy.filters.http.custom_response"

func hasErrorPages(svcs []model.Service) bool {
	for _, s := range svcs {
		for _, r := range s.Routes {
			if len(model.EffectiveErrorPages(s, r)) > 0 {
				return true
			}
		}
	}
	return false
}

// customResponseFilter is first in the chain, so it is the last to see a
// response: an upstream's, the router's own (no healthy upstream, 503) and
// those of every other filter (jwt_authn's 401, rbac's 403, ext_authz,
// local_ratelimit's 429). Its own configuration has no matcher: only the
// routes that carry pages change anything.
func customResponseFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: CustomResponseFilter,
		ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&customresponse.CustomResponse{})}}
}

// errorPagesPerRoute is the route's pages as a CustomResponse (the
// filter's per-route configuration), nil when it has none.
func errorPagesPerRoute(s model.Service, r model.Route) *anypb.Any {
	pages := model.EffectiveErrorPages(s, r)
	if len(pages) == 0 {
		return nil
	}
	list := &xdsmatcher.Matcher_MatcherList{}
	for i, p := range pages {
		var statuses []*xdsmatcher.Matcher_MatcherList_Predicate
		for _, st := range p.Statuses {
			statuses = append(statuses, singlePredicate("status", &matcher.HttpResponseStatusCodeMatchInput{}, strconv.Itoa(int(st))))
		}
		pred := anyOf(statuses)
		ct := p.ContentType
		if ct == "" {
			ct = model.DefaultContentType
		}
		policy := &localresponse.LocalResponsePolicy{
			Body: inline(p.Body),
			// The body is written as is (a text_format of the body itself
			// would read "%" as the start of a command).
			BodyFormat: &core.SubstitutionFormatString{
				Format:      &core.SubstitutionFormatString_TextFormatSource{TextFormatSource: inline("%LOCAL_REPLY_BODY%")},
				ContentType: ct,
			},
			// Envoy 1.40 answers the page as text/plain whatever the body
			// format's content type says: the header sets it.
			ResponseHeadersToAdd: []*core.HeaderValueOption{overwrite("content-type", ct)},
		}
		list.Matchers = append(list.Matchers, &xdsmatcher.Matcher_MatcherList_FieldMatcher{
			Predicate: pred,
			OnMatch: &xdsmatcher.Matcher_OnMatch{OnMatch: &xdsmatcher.Matcher_OnMatch_Action{Action: &xdscore.TypedExtensionConfig{
				Name: fmt.Sprintf("%s/page-%d", s.Name, i), TypedConfig: mustAny(policy),
			}}},
		})
	}
	return mustAny(&customresponse.CustomResponse{CustomResponseMatcher: &xdsmatcher.Matcher{
		MatcherType: &xdsmatcher.Matcher_MatcherList_{MatcherList: list},
	}})
}

// singlePredicate matches the input named name exactly against value.
func singlePredicate(name string, input proto.Message, value string) *xdsmatcher.Matcher_MatcherList_Predicate {
	return &xdsmatcher.Matcher_MatcherList_Predicate{MatchType: &xdsmatcher.Matcher_MatcherList_Predicate_SinglePredicate_{
		SinglePredicate: &xdsmatcher.Matcher_MatcherList_Predicate_SinglePredicate{
			Input: &xdscore.TypedExtensionConfig{Name: name, TypedConfig: mustAny(input)},
			Matcher: &xdsmatcher.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{ValueMatch: &xdsmatcher.StringMatcher{
				MatchPattern: &xdsmatcher.StringMatcher_Exact{Exact: value}}},
		}}}
}

// anyOf is one predicate, or an or_matcher of several (it needs two).
func anyOf(ps []*xdsmatcher.Matcher_MatcherList_Predicate) *xdsmatcher.Matcher_MatcherList_Predicate {
	if len(ps) == 1 {
		return ps[0]
	}
	return &xdsmatcher.Matcher_MatcherList_Predicate{MatchType: &xdsmatcher.Matcher_MatcherList_Predicate_OrMatcher{
		OrMatcher: &xdsmatcher.Matcher_MatcherList_Predicate_PredicateList{Predicate: ps}}}
}
