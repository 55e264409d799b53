package translate_test

import (
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/translate"
)

// TestHostMatchingIgnoresPort: a client of a listener on another port
// than 80 or 443 sends Host: name:port. Envoy matches virtual hosts on the
// whole :authority, so without ignore_port_in_host_matching every such
// request was 404 (seen through the real Envoy, integration/l7envoy/authz).
// The option ignores the port for matching only: the upstream and the
// authorization service still see it (CSRF compares origins with it).
func TestHostMatchingIgnoresPort(t *testing.T) {
	set := translate.Group(loadExample(t), "edge", translate.Gateway)
	if len(set[resource.RouteType]) == 0 {
		t.Fatal("no route configuration")
	}
	for _, res := range set[resource.RouteType] {
		rc := res.(*route.RouteConfiguration)
		if !rc.GetIgnorePortInHostMatching() {
			t.Errorf("route configuration %s matches hosts with their port", rc.GetName())
		}
	}
}
