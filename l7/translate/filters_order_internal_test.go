package translate

import (
	"testing"

	jwtauthn "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
)

// TestHTTPFilterOrderNamesWhatItBuilds: each entry of the ordered list
// builds the filter it names, and a listener that needs every filter
// gets them all in the list's order, router last.
func TestHTTPFilterOrderNamesWhatItBuilds(t *testing.T) {
	all := httpFilters{authz: true, jwt: true, identity: "x-sub", rbac: true, cors: true, localRL: true, globalRL: "edge", errorPages: true, accessLogOff: true}
	order := httpFilterOrder()
	got := all.chain(&jwtauthn.JwtAuthentication{})
	if len(got) != len(order) {
		t.Fatalf("%d filters for a listener that needs all %d", len(got), len(order))
	}
	for i, h := range order {
		if got[i].GetName() != h.name {
			t.Errorf("filter %d is %s, the list names %s", i, got[i].GetName(), h.name)
		}
	}
	if none := (httpFilters{}).chain(nil); len(none) != 1 || none[0].GetName() != order[len(order)-1].name {
		t.Errorf("a listener that needs no filter runs %v; want the router alone", none)
	}
}
