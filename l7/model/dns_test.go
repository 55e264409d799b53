package model_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

// TestParseDNSName: host:port with a DNS name; IP addresses, wildcards,
// upper case, bad ports and missing ports are refused with a reason.
func TestParseDNSName(t *testing.T) {
	for in, want := range map[string]string{
		"todolist:8082":                         "todolist:8082",
		"todolist.shop.svc.cluster.local:80":    "todolist.shop.svc.cluster.local:80",
		"a-b.example:65535":                     "a-b.example:65535",
		"todolist":                              "want host:port",
		"todolist:0":                            "want a port of 1..65535",
		"todolist:65536":                        "want a port of 1..65535",
		"todolist:http":                         "want a port of 1..65535",
		"198.51.100.1:80":                       "is an IP address",
		"[2001:db8::1]:80":                      "is an IP address",
		"*.example:80":                          "not a DNS name",
		"TodoList:80":                           "not a DNS name",
		"todo_list:80":                          "not a DNS name",
		":80":                                   "not a DNS name",
		strings.Repeat("a", 64) + ".example:80": "not a DNS name",
	} {
		n, err := model.ParseDNSName(in)
		switch {
		case err == nil && n.String() != want:
			t.Errorf("%q: %s, want %q", in, n, want)
		case err != nil && !strings.Contains(err.Error(), want):
			t.Errorf("%q: %v, want an error saying %q", in, err, want)
		}
	}
}

// TestDNSUpstreamChecks: an upstream has IP endpoints or one DNS name,
// never both; the problem names the service and the field.
func TestDNSUpstreamChecks(t *testing.T) {
	s := svc("todolist", "", "/")
	s.Upstreams[0].DNS = &model.DNSName{Host: "todolist", Port: 8082}
	if err := model.CheckService(s); err != nil {
		t.Fatalf("a DNS upstream: %v", err)
	}
	s.Upstreams[0].Endpoints = []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.1:80")}}
	err := model.CheckService(s)
	if err == nil || !strings.Contains(err.Error(), `service "todolist": upstreams[0].endpoints: an upstream has IP endpoints or one DNS name`) {
		t.Errorf("both kinds: %v", err)
	}
	s.Upstreams[0].Endpoints = nil
	s.Upstreams[0].DNS = &model.DNSName{Host: "Todo_List", Port: 8082}
	if err := model.CheckService(s); err == nil || !strings.Contains(err.Error(), "upstreams[0].endpoints: \"Todo_List\" is not a DNS name") {
		t.Errorf("bad name: %v", err)
	}
}

// TestDefaultListener: an operator's service that names no listener is
// served on its group's default listeners, and on no other listener; a
// service naming a listener keeps to it, a Kubernetes service and a
// Gateway API route never land on a default listener, and a default
// listener must serve routes.
func TestDefaultListener(t *testing.T) {
	g := gw("pub", "192.0.2.1", 80, model.HTTP)
	g.Listeners[0].Default = true
	g.Listeners = append(g.Listeners, model.Listener{Name: "other", VIP: netip.MustParseAddr("192.0.2.2"), Port: 80, Protocol: model.HTTP})
	other := gw("elsewhere", "192.0.2.3", 80, model.HTTP)
	other.Group = "another"
	other.Listeners[0].Default = true
	unlisted := svc("unlisted", "", "/a")
	named := svc("named", "named.example", "/b")
	named.Listeners = []model.ListenerRef{{Gateway: "pub", Listener: "other"}}
	kube := svc("team.app", "app.example", "/c")
	kube.Namespace = "team"
	gwapi := svc("gw.route", "route.example", "/d")
	gwapi.GatewayAPI = true
	r := model.Resolve(model.Config{Gateways: []model.Gateway{g, other}, Services: []model.Service{unlisted, named, kube, gwapi}}, model.Options{})
	served := map[string]string{}
	for _, el := range r.Listeners {
		served[el.Name] = strings.Join(el.Services, ",")
	}
	want := map[string]string{"http-192.0.2.1-80": "unlisted", "http-192.0.2.2-80": "named", "http-192.0.2.3-80": ""}
	for l, w := range want {
		if served[l] != w {
			t.Errorf("listener %s serves %q, want %q (all: %v)", l, served[l], w, served)
		}
	}
	for _, bad := range []model.Listener{
		{Name: "l", VIP: netip.MustParseAddr("192.0.2.1"), Port: 80, Protocol: model.HTTP, RedirectHTTPS: true, Default: true},
		{Name: "l", VIP: netip.MustParseAddr("192.0.2.1"), Port: 5432, Protocol: model.TCP, Target: "a/u", Default: true},
	} {
		g := model.Gateway{Name: "g", Group: "edge", Listeners: []model.Listener{bad}}
		if err := model.CheckGateway(g, nil); err == nil || !strings.Contains(err.Error(), "listeners[0].default: only an HTTP or HTTPS listener") {
			t.Errorf("%+v: %v, want listeners[0].default refused", bad, err)
		}
	}
}
