package gatewayapi

import (
	"fmt"
	"net/netip"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkBuild500Routes50Gateways is the shape of the controller's
// bench: 500 HTTPRoutes on 50 Gateways, rebuilt whole.
func BenchmarkBuild500Routes50Gateways(b *testing.B) {
	in := world(b)
	in.Gateways = nil
	for g := range 50 {
		name := fmt.Sprintf("gw%d", g)
		in.Gateways = append(in.Gateways, testGateway("infra", name, allNamespaces(httpListener("http", 80, ""))))
		in.Addresses[nn("infra", name)] = []netip.Addr{netip.AddrFrom4([4]byte{203, 0, 113, byte(g + 1)})}
	}
	for r := range 500 {
		hr := testHTTPRoute(fmt.Sprintf("r%d", r))
		hr.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", fmt.Sprintf("gw%d", r%50), "http")}
		hr.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("r%d.example.com", r))}
		in.HTTPRoutes = append(in.HTTPRoutes, hr)
	}
	b.ResetTimer()
	for b.Loop() {
		res := Build(in)
		if len(res.Config.Services) != 500 || len(res.Config.Gateways) != 50 {
			b.Fatalf("%d services and %d gateways; want 500 and 50", len(res.Config.Services), len(res.Config.Gateways))
		}
	}
}
