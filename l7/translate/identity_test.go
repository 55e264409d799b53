package translate_test

import (
	"slices"
	"strings"
	"testing"

	headermutation "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_mutation/v3"

	"github.com/tlbproject/tlb/l7/translate"
)

// identityApp maps session fields to headers of its own on one route.
const identityApp = `kind: gateway/service/v1
name: app
group: g
hosts: [app.example.com]
listeners: [gw/guarded]
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes:
  - name: private
    prefix: /private
    target: u
    interceptors:
      - {type: sessionInterceptor, headers: {user: x-user-id, tenant: x-tenant}}
  - name: public
    prefix: /
    target: u
`

// TestIdentityHeadersRemovedOnEveryRouteOfTheListener: the headers a
// sessionInterceptor sets are removed from the client's request on every
// route of the listener, before any filter: on the route that sets them,
// on its sibling of the same host that checks nothing, and on another
// service's route (issue 22 item 3: a client's x-user-id reached the
// backend through a route without interceptors). A listener whose routes
// set no identity has no header_mutation at all.
func TestIdentityHeadersRemovedOnEveryRouteOfTheListener(t *testing.T) {
	r := resolveDocs(t, filtersGateway, identityApp, filtersPlain)
	hcms, rcs := gatewaySet(t, r)
	guarded := hcms["http-203.0.113.1-80"]
	names := filterNames(guarded)
	if len(names) == 0 || names[0] != translate.HeaderMutationFilter || !slices.Contains(names, translate.ExtAuthzFilter) {
		t.Fatalf("guarded listener filters = %v, want header_mutation first, before ext_authz", names)
	}
	for name, rt := range routesByName(rcs["http-203.0.113.1-80"]) {
		hm := perRoute[headermutation.HeaderMutationPerRoute](t, rt, translate.HeaderMutationFilter)
		var removed []string
		for _, m := range hm.GetMutations().GetRequestMutations() {
			removed = append(removed, m.GetRemove())
		}
		if strings.Join(removed, ",") != "x-tenant,x-user-id" {
			t.Errorf("%s removes %v, want x-tenant and x-user-id", name, removed)
		}
	}
	if got := filterNames(hcms["http-203.0.113.2-80"]); !slices.Equal(got, []string{"envoy.filters.http.router"}) {
		t.Errorf("open listener filters = %v, want the router only", got)
	}
	for n, rt := range routesByName(rcs["http-203.0.113.2-80"]) {
		if rt.GetTypedPerFilterConfig() != nil {
			t.Errorf("%s on the open listener carries per-filter config", n)
		}
	}
}
