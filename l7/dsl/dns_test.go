package dsl_test

import (
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
)

// TestSeed000Examples: seed 000's two DSL examples, byte for byte
// (testdata/seed000), parse: target todolist:8082 is an upstream of the
// service named by DNS, the rewrite and the interceptors are the seed's,
// and the external interceptor takes the service's interceptor address.
func TestSeed000Examples(t *testing.T) {
	for _, name := range []string{"route.yaml", "external.yaml"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile("testdata/seed000/" + name)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := dsl.Parse(name, b)
			if err != nil {
				t.Fatalf("the seed's own example is refused: %v", err)
			}
			s := doc.Service
			if s.Name != "todolist" || s.Group != "default" || len(s.Listeners) != 0 {
				t.Fatalf("service %q group %q listeners %v", s.Name, s.Group, s.Listeners)
			}
			want := model.Upstream{Name: "todolist-8082", DNS: &model.DNSName{Host: "todolist", Port: 8082}}
			if len(s.Upstreams) != 1 || s.Upstreams[0].Name != want.Name || *s.Upstreams[0].DNS != *want.DNS || len(s.Upstreams[0].Endpoints) != 0 {
				t.Fatalf("upstreams %+v, want %+v", s.Upstreams, want)
			}
			r := s.Routes[0]
			if len(r.Targets) != 1 || r.Targets[0].Upstream != "todolist-8082" {
				t.Errorf("route targets %+v", r.Targets)
			}
			switch name {
			case "route.yaml":
				if r.Regex != `^/todolist/.*$` || r.Rewrite == nil || r.Rewrite.Regex != `^/todolist/(.*)$` || r.Rewrite.Substitution != `/\1` {
					t.Errorf("route %+v rewrite %+v", r, r.Rewrite)
				}
				if len(r.Interceptors) != 2 || r.Interceptors[0].Type != chain.TypeSession || r.Interceptors[1].Type != chain.TypeCSRF {
					t.Errorf("interceptors %+v", r.Interceptors)
				}
			case "external.yaml":
				if len(r.Interceptors) != 3 {
					t.Fatalf("interceptors %+v", r.Interceptors)
				}
				ext := r.Interceptors[2]
				if ext.Type != chain.TypeExternal || ext.ID != "todolist" || ext.Address != "todolist:8081" || ext.Parameters["method"] != "authorize_create" {
					t.Errorf("external interceptor %+v, want id todolist at todolist:8081 with method authorize_create", ext)
				}
			}
		})
	}
}

// TestDNSEndpointsAndTargets: endpoints and route targets may be
// host:port; bad names, two names in one upstream, names beside IP
// endpoints and a target colliding with a declared upstream are errors
// naming the file and the field.
func TestDNSEndpointsAndTargets(t *testing.T) {
	head := "kind: gateway/service/v1\nname: shop\n"
	ok := map[string]struct {
		src  string
		want []model.Upstream
	}{
		"endpoint by name": {
			src:  head + "upstreams:\n  - {name: v1, endpoints: [\"shop.internal:8080\"]}\nroutes:\n  - {prefix: /, target: v1}\n",
			want: []model.Upstream{{Name: "v1", DNS: &model.DNSName{Host: "shop.internal", Port: 8080}}},
		},
		"address targets, one upstream each, reused": {
			src: head + "routes:\n  - {prefix: /a, target: \"shop:80\"}\n  - {prefix: /b, target: \"shop:80\"}\n  - {prefix: /c, target: \"198.51.100.7:81\"}\n",
			want: []model.Upstream{{Name: "shop-80", DNS: &model.DNSName{Host: "shop", Port: 80}},
				{Name: "198.51.100.7-81", Endpoints: []model.Endpoint{{Addr: mustAddrPort(t, "198.51.100.7:81"), Weight: 1}}}},
		},
	}
	for name, tc := range ok {
		t.Run(name, func(t *testing.T) {
			doc, err := dsl.Parse("shop.yaml", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			got := doc.Service.Upstreams
			if len(got) != len(tc.want) {
				t.Fatalf("upstreams %+v, want %+v", got, tc.want)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Name != w.Name || (g.DNS == nil) != (w.DNS == nil) || (g.DNS != nil && *g.DNS != *w.DNS) || len(g.Endpoints) != len(w.Endpoints) {
					t.Errorf("upstream %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
	for name, tc := range map[string]struct{ src, want string }{
		"bad name":                {head + "upstreams:\n  - {name: v1, endpoints: [\"shop_db:8080\"]}\nroutes:\n  - {prefix: /, target: v1}\n", `shop.yaml: upstreams[0].endpoints[0]: want ip:port or host:port with a DNS name: "shop_db" is not a DNS name`},
		"no port":                 {head + "upstreams:\n  - {name: v1, endpoints: [\"shop.internal\"]}\nroutes:\n  - {prefix: /, target: v1}\n", `shop.yaml: upstreams[0].endpoints[0]: want ip:port or host:port with a DNS name: want host:port, got "shop.internal"`},
		"two names":               {head + "upstreams:\n  - {name: v1, endpoints: [\"a.internal:80\", \"b.internal:80\"]}\nroutes:\n  - {prefix: /, target: v1}\n", `shop.yaml: upstreams[0].endpoints[0]: a.internal:80 is a DNS name: an upstream has IP endpoints or one DNS name`},
		"name beside an IP":       {head + "upstreams:\n  - {name: v1, endpoints: [\"198.51.100.1:80\", \"b.internal:80\"]}\nroutes:\n  - {prefix: /, target: v1}\n", `shop.yaml: upstreams[0].endpoints[1]: b.internal:80 is a DNS name: an upstream has IP endpoints or one DNS name`},
		"bad target name":         {head + "routes:\n  - {prefix: /, target: \"Shop:80\"}\n", `shop.yaml: routes[0].target: want the name of an upstream of this service, or host:port: "Shop" is not a DNS name`},
		"bad target port":         {head + "routes:\n  - {prefix: /, target: \"shop:0\"}\n", `shop.yaml: routes[0].target: want the name of an upstream of this service, or host:port: want a port of 1..65535 in "shop:0"`},
		"target hits an upstream": {head + "upstreams:\n  - {name: shop-80, endpoints: [\"198.51.100.1:80\"]}\nroutes:\n  - {prefix: /, target: \"shop:80\"}\n", `shop.yaml: routes[0].target: shop:80 would be the upstream "shop-80", which upstreams[0] declares`},
		"no such upstream":        {head + "routes:\n  - {prefix: /, target: shop}\n", `no upstream "shop" in this service`},
		"two targets, one name":   {head + "routes:\n  - {prefix: /a, target: \"1:80\"}\n  - {prefix: /b, target: \"[::1]:80\"}\n", `shop.yaml: routes[1].target: [::1]:80 and 1:80 would both be the upstream "1-80"`},
		"name too long":           {head + "routes:\n  - {prefix: /, target: \"" + strings.Repeat("a", 60) + ".example:8080\"}\n", `makes no upstream name`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Parse("shop.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestDefaultListenerParses: a listener's default: true reaches the
// model; on a TCP listener it is refused, naming the field.
func TestDefaultListenerParses(t *testing.T) {
	doc, err := dsl.Parse("gw.yaml", []byte("kind: gateway/gateway/v1\nname: pub\nlisteners:\n  - {name: web, vip: 192.0.2.1, port: 80, protocol: HTTP, default: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Gateway.Listeners[0].Default {
		t.Errorf("listener %+v, want Default", doc.Gateway.Listeners[0])
	}
	_, err = dsl.Parse("gw.yaml", []byte("kind: gateway/gateway/v1\nname: pub\nlisteners:\n  - {name: db, vip: 192.0.2.1, port: 5432, protocol: TCP, target: a/b, default: true}\n"))
	if err == nil || !strings.Contains(err.Error(), "gw.yaml: gateway \"pub\": listeners[0].default: only an HTTP or HTTPS listener") {
		t.Errorf("default on a TCP listener: %v", err)
	}
}

func mustAddrPort(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return ap
}
