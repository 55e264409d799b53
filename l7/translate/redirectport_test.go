package translate

import (
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

// A redirect to another host without scheme or port keeps the port of a
// listener on a port other than its protocol's own (the conformance
// test HTTPRouteRedirectPortAndScheme: a :8080 listener's redirect to
// example.org goes to example.org:8080); a set scheme or port wins, and
// listeners on 80 and 443 add no port.
func TestRedirectKeepsTheListenerPort(t *testing.T) {
	toHost := model.Route{Redirect: &model.Redirect{Hostname: "example.org"}}
	svcs := []model.Service{{Name: "s", Routes: []model.Route{toHost}}}
	for _, tc := range []struct {
		proto model.Protocol
		port  uint32
		r     model.Route
		want  uint32
	}{
		{model.HTTP, 8080, toHost, 8080},
		{model.HTTPS, 8443, toHost, 8443},
		{model.HTTP, 80, toHost, 0},
		{model.HTTPS, 443, toHost, 0},
		{model.HTTP, 8080, model.Route{Redirect: &model.Redirect{Hostname: "example.org", Port: 9090}}, 9090},
		{model.HTTP, 8080, model.Route{Redirect: &model.Redirect{Hostname: "example.org", Scheme: "https"}}, 0},
		{model.HTTP, 8080, model.Route{Redirect: &model.Redirect{Scheme: "https"}}, 0},
	} {
		port := listenerRedirectPort(model.EnvoyListener{Protocol: tc.proto, Port: tc.port}, svcs)
		if got := redirectAction(tc.r, port).GetPortRedirect(); got != tc.want {
			t.Errorf("%s listener on %d, redirect %+v: port %d, want %d", tc.proto, tc.port, *tc.r.Redirect, got, tc.want)
		}
	}
	if p := listenerRedirectPort(model.EnvoyListener{Protocol: model.HTTP, Port: 8080}, []model.Service{{Name: "s", Routes: []model.Route{{Prefix: "/"}}}}); p != 0 {
		t.Errorf("listener without such a redirect: port %d, want 0 (routes shared with other listeners)", p)
	}
}
