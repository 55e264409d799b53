package translate_test

import (
	"slices"
	"strings"
	"testing"

	customresponse "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/custom_response/v3"
	extauthz "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	localresponse "github.com/envoyproxy/go-control-plane/envoy/extensions/http/custom_response/local_response_policy/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/translate"
)

// TestErrorPagesOnlyWhereAsked: custom_response is first on the listeners
// serving a route with pages; those routes carry their service's pages
// (502 and 503 in one matcher, 404 in another); a route that
// opted out, the maintenance route and the other service's routes carry
// none; a listener whose routes have no pages has no filter.
func TestErrorPagesOnlyWhereAsked(t *testing.T) {
	hcms, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	for _, l := range []string{web, webTLS} {
		if got := filterNames(hcms[l]); len(got) == 0 || got[0] != translate.CustomResponseFilter {
			t.Errorf("%s filters = %v, want custom_response first", l, got)
		}
	}
	rs := routesByName(rcs[webTLS])
	cr := perRoute[customresponse.CustomResponse](t, rs["site/main"], translate.CustomResponseFilter)
	ms := cr.GetCustomResponseMatcher().GetMatcherList().GetMatchers()
	if len(ms) != 2 {
		t.Fatalf("site/main pages = %v", cr)
	}
	var statuses []string
	for _, p := range ms[0].GetPredicate().GetOrMatcher().GetPredicate() {
		statuses = append(statuses, p.GetSinglePredicate().GetValueMatch().GetExact())
		var in matcher.HttpResponseStatusCodeMatchInput
		if err := p.GetSinglePredicate().GetInput().GetTypedConfig().UnmarshalTo(&in); err != nil {
			t.Errorf("page 0 input: %v", err)
		}
	}
	if !slices.Equal(statuses, []string{"502", "503"}) {
		t.Errorf("page 0 statuses = %v", statuses)
	}
	var pol localresponse.LocalResponsePolicy
	if err := ms[0].GetOnMatch().GetAction().GetTypedConfig().UnmarshalTo(&pol); err != nil {
		t.Fatal(err)
	}
	if pol.GetBody().GetInlineString() != "<h1>Sorry</h1>" || pol.GetBodyFormat().GetContentType() != "text/html" || pol.GetStatusCode() != nil {
		t.Errorf("page 0 policy = %v", &pol)
	}
	if got := ms[1].GetPredicate().GetSinglePredicate().GetValueMatch().GetExact(); got != "404" {
		t.Errorf("page 1 predicate = %v, want 404 alone", ms[1].GetPredicate())
	}
	for _, n := range []string{"site/api", "site/down", "other/all"} {
		if _, ok := rs[n].GetTypedPerFilterConfig()[translate.CustomResponseFilter]; ok {
			t.Errorf("%s carries error pages", n)
		}
	}
	if a := perRoute[extauthz.ExtAuthzPerRoute](t, rs["other/all"], translate.ExtAuthzFilter); !a.GetDisabled() {
		t.Errorf("other/all ext_authz = %v", a)
	}
	hcms, _ = gatewaySet(t, respResolved(t, respGateway, respOther))
	for l, m := range hcms {
		if got := filterNames(m); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
			t.Errorf("%s without pages: filters %v", l, got)
		}
	}
}

// TestErrorPagesKeepTheRolesMapping: a 401 page on the JWT service's
// listener puts custom_response first and leaves the local reply mapper
// that turns RBAC's 403 for a bad roles claim into 401 as it was.
func TestErrorPagesKeepTheRolesMapping(t *testing.T) {
	hcmsBefore, _ := gatewaySet(t, jwtDir(t, jwtAPI))
	withPages := strings.Replace(jwtAPI, "jwt:\n", "errorPages: [{statuses: [401, 403], body: '{\"error\":\"denied\"}', contentType: application/json}]\njwt:\n", 1)
	hcms, rcs := gatewaySet(t, jwtDir(t, withPages))
	const guarded = "http-203.0.113.1-80"
	want := []string{translate.CustomResponseFilter, translate.HeaderMutationFilter, translate.JWTFilter, translate.RBACFilter, translate.RolesClaimFilter, "envoy.filters.http.router"}
	if got := filterNames(hcms[guarded]); !slices.Equal(got, want) {
		t.Fatalf("guarded filters = %v, want %v", got, want)
	}
	if before, after := hcmsBefore[guarded].GetLocalReplyConfig(), hcms[guarded].GetLocalReplyConfig(); after == nil || !proto.Equal(before, after) {
		t.Errorf("local reply config changed: %v -> %v", before, after)
	}
	g := routesByName(rcs[guarded])
	if _, ok := g["api/admin"].GetTypedPerFilterConfig()[translate.CustomResponseFilter]; !ok {
		t.Error("api/admin has no error pages")
	}
	if _, ok := g["plain/all"].GetTypedPerFilterConfig()[translate.CustomResponseFilter]; ok {
		t.Error("plain/all got the api's error pages")
	}
}
