package gatewayapi

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// l4World is the test world with a TCP listener (9300) and a UDP
// listener (5300) on infra/gw, and app/db with a TCP and a UDP port.
func l4World(t *testing.T) Inputs {
	in := world(t)
	tcp := allNamespaces(gatewayv1.Listener{Name: "tcp", Port: 9300, Protocol: gatewayv1.TCPProtocolType})
	udp := allNamespaces(gatewayv1.Listener{Name: "udp", Port: 5300, Protocol: gatewayv1.UDPProtocolType})
	in.Gateways[0].Spec.Listeners = append(in.Gateways[0].Spec.Listeners, tcp, udp)
	in.Services = append(in.Services, testService("app", "db",
		corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}, corev1.ServicePort{Name: "sql", Port: 5432}))
	dns := endpointSlice("app", "db", "dns", 5353, map[string]bool{"10.0.1.1": true, "10.0.1.2": true})
	dns.Name, dns.Ports[0].Protocol = "db-udp", ptr(corev1.ProtocolUDP)
	in.EndpointSlices = append(in.EndpointSlices, dns, endpointSlice("app", "db", "sql", 5432, map[string]bool{"10.0.1.1": true}))
	return in
}

func testTCPRoute(name string, refs ...gatewayv1.BackendRef) *gatewayv1.TCPRoute {
	return &gatewayv1.TCPRoute{ObjectMeta: meta("app", name), Spec: gatewayv1.TCPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "tcp")}},
		Rules:           []gatewayv1.TCPRouteRule{{BackendRefs: refs}},
	}}
}

func testUDPRoute(name string, refs ...gatewayv1.BackendRef) *gatewayv1.UDPRoute {
	return &gatewayv1.UDPRoute{ObjectMeta: meta("app", name), Spec: gatewayv1.UDPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "udp")}},
		Rules:           []gatewayv1.UDPRouteRule{{BackendRefs: refs}},
	}}
}

// listenerOf is the model listener named name of the first gateway.
func listenerOf(t *testing.T, res Result, name string) model.Listener {
	t.Helper()
	for _, l := range res.Config.Gateways[0].Listeners {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no listener %s in %s", name, jsonOf(res.Config.Gateways[0].Listeners))
	return model.Listener{}
}

func TestTCPRouteForwardsWeighted(t *testing.T) {
	in := l4World(t)
	old := testTCPRoute("t", backendRef("", "db", 5432, ptr(int32(70))), backendRef("", "web", 8080, ptr(int32(30))),
		backendRef("", "web", 8080, ptr(int32(0))), backendRef("", "nope", 1, ptr(int32(10))))
	old.CreationTimestamp.Time = testNow.Add(-2 * 3600e9)
	in.TCPRoutes = append(in.TCPRoutes, testTCPRoute("newer", backendRef("", "web", 8080, nil)), old)
	res := Build(in)
	wantCond(t, res.Status.TCPRoutes[nn("app", "t")].Parents[0].Conditions, "Accepted", true, "Accepted")
	wantCond(t, res.Status.TCPRoutes[nn("app", "t")].Parents[0].Conditions, "ResolvedRefs", false, "BackendNotFound")
	// The newer route is accepted, but the listener forwards for the
	// oldest; both count as attached.
	wantCond(t, res.Status.TCPRoutes[nn("app", "newer")].Parents[0].Conditions, "Accepted", true, "Accepted")
	want := []model.WeightedCluster{
		{Cluster: "tcp.app.t/app.db.5432", Weight: 70}, {Cluster: "tcp.app.t/app.web.8080", Weight: 30},
		{Cluster: "tcp.app.t/invalid-backends", Weight: 10},
	}
	if got := listenerOf(t, res, "tcp-9300").Forward; !reflect.DeepEqual(got, want) {
		t.Fatalf("forward %s; want %s", jsonOf(got), jsonOf(want))
	}
	for _, l := range res.Status.Gateways[gwKey].Listeners {
		if l.Name == "tcp" && l.AttachedRoutes != 2 {
			t.Fatalf("listener tcp: %d attached routes; want 2", l.AttachedRoutes)
		}
	}
	if r := model.Resolve(res.Config, model.Options{}); len(r.Problems) > 0 {
		t.Fatalf("the model refuses it: %v", r.Problems)
	}
}

func TestUDPRouteWeightsEndpoints(t *testing.T) {
	in := l4World(t)
	// db:53 (UDP) has two endpoints, web:8080 one: weights 3 and 1
	// become 3 per db endpoint (3*2/2) and 2 for web's (1*2/1).
	in.UDPRoutes = append(in.UDPRoutes, testUDPRoute("u", backendRef("", "db", 53, ptr(int32(3))), backendRef("", "web", 8080, ptr(int32(1)))))
	res := Build(in)
	wantCond(t, res.Status.UDPRoutes[nn("app", "u")].Parents[0].Conditions, "ResolvedRefs", false, "BackendNotFound") // web has no UDP port
	in.Services = append(in.Services, testService("app", "ns2", corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}))
	one := endpointSlice("app", "ns2", "dns", 53, map[string]bool{"10.0.2.1": true})
	one.Ports[0].Protocol = ptr(corev1.ProtocolUDP)
	in.EndpointSlices = append(in.EndpointSlices, one)
	in.UDPRoutes[0].Spec.Rules[0].BackendRefs[1] = backendRef("", "ns2", 53, ptr(int32(1)))
	res = Build(in)
	wantCond(t, res.Status.UDPRoutes[nn("app", "u")].Parents[0].Conditions, "ResolvedRefs", true, "ResolvedRefs")
	if got, want := listenerOf(t, res, "udp-5300").Forward, []model.WeightedCluster{{Cluster: "udp.app.u/weighted", Weight: 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("forward %s; want %s", jsonOf(got), jsonOf(want))
	}
	var ups []model.Upstream
	for _, s := range res.Config.Services {
		if s.Name == "udp.app.u" {
			ups = s.Upstreams
		}
	}
	if len(ups) != 1 {
		t.Fatalf("upstreams %s; want one", jsonOf(ups))
	}
	weights := map[string]uint32{}
	for _, e := range ups[0].Endpoints {
		weights[e.Addr.String()] = e.Weight
	}
	if want := map[string]uint32{"10.0.1.1:5353": 3, "10.0.1.2:5353": 3, "10.0.2.1:53": 2}; !reflect.DeepEqual(weights, want) {
		t.Fatalf("endpoint weights %v; want %v", weights, want)
	}
	if r := model.Resolve(res.Config, model.Options{}); len(r.Problems) > 0 {
		t.Fatalf("the model refuses it: %v", r.Problems)
	}
}

func TestL4RouteNotAllowedOnHTTPListener(t *testing.T) {
	in := l4World(t)
	tr := testTCPRoute("t", backendRef("", "db", 5432, nil))
	tr.Spec.ParentRefs[0].SectionName = ptr(gatewayv1.SectionName("http"))
	in.TCPRoutes = append(in.TCPRoutes, tr)
	res := Build(in)
	wantCond(t, res.Status.TCPRoutes[nn("app", "t")].Parents[0].Conditions, "Accepted", false, "NotAllowedByListeners")
	for _, l := range res.Config.Gateways[0].Listeners {
		if l.Protocol == model.TCP {
			t.Fatalf("listener %s served without a route", l.Name)
		}
	}
}
