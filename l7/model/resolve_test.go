package model_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

func svc(name, host, prefix string) model.Service {
	s := model.Service{Name: name, Group: "edge", Origin: model.Origin(name + ".yaml"),
		Upstreams: []model.Upstream{{Name: "u"}},
		Routes:    []model.Route{{Prefix: prefix, Targets: []model.WeightedTarget{{Upstream: "u", Weight: 1}}}}}
	if host != "" {
		s.Hosts = []string{host}
	}
	return s
}

func gw(name, vip string, port uint32, proto model.Protocol) model.Gateway {
	l := model.Listener{Name: "l", VIP: netip.MustParseAddr(vip), Port: port, Protocol: proto}
	if proto == model.TCP {
		l.Target = "a/u"
	}
	return model.Gateway{Name: name, Group: "edge", Origin: model.Origin(name + ".yaml"), Listeners: []model.Listener{l}}
}

func names[T any](xs []T, name func(T) string) string {
	var out []string
	for _, x := range xs {
		out = append(out, name(x))
	}
	return strings.Join(out, ",")
}

// TestConflictsIncumbentWins: the object already served keeps serving,
// whatever the names; with no incumbent the first name wins.
func TestConflictsIncumbentWins(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg       model.Config
		incumbent string // "kind/name"
		want      string // accepted services or gateways
		rejected  string
	}{
		"duplicate route, newcomer sorted first": {
			cfg:       model.Config{Services: []model.Service{svc("a", "x.example.com", "/p"), svc("z", "x.example.com", "/p")}},
			incumbent: "service/z", want: "z", rejected: "a",
		},
		"duplicate route, no incumbent": {
			cfg:  model.Config{Services: []model.Service{svc("z", "x.example.com", "/p"), svc("a", "x.example.com", "/p")}},
			want: "a", rejected: "z",
		},
		"same prefix, other host": {
			cfg:  model.Config{Services: []model.Service{svc("a", "x.example.com", "/p"), svc("b", "y.example.com", "/p")}},
			want: "a,b",
		},
		"port conflict": {
			cfg:       model.Config{Services: []model.Service{svc("a", "", "/")}, Gateways: []model.Gateway{gw("a", "203.0.113.1", 443, model.HTTPS), gw("b", "203.0.113.1", 443, model.TCP)}},
			incumbent: "gateway/b", want: "b", rejected: "a",
		},
	} {
		t.Run(name, func(t *testing.T) {
			for i := range tc.cfg.Gateways { // HTTPS needs a certificate
				if tc.cfg.Gateways[i].Listeners[0].Protocol == model.HTTPS {
					tc.cfg.Gateways[i].Listeners[0].TLS = []model.SNICertificate{{ServerNames: []string{"x.example.com"}, Certificate: "c"}}
				}
			}
			tc.cfg.Certificates = []model.Certificate{{Name: "c", Chain: []byte("chain"), Key: model.NewPrivateKey([]byte("k"))}}
			r := model.Resolve(tc.cfg, func(kind, name string) bool { return kind+"/"+name == tc.incumbent })
			got := names(r.Config.Services, func(s model.Service) string { return s.Name })
			if len(tc.cfg.Gateways) > 0 {
				got = names(r.Config.Gateways, func(g model.Gateway) string { return g.Name })
			}
			if got != tc.want {
				t.Fatalf("accepted %q, want %q (problems %v)", got, tc.want, r.Problems)
			}
			var rej []string
			for _, p := range r.Problems {
				if p.Rejected {
					rej = append(rej, p.Name)
				} else if p.Name != tc.want {
					t.Errorf("kept-side problem on %s, want it on the winner %s", p.Name, tc.want)
				}
			}
			if strings.Join(rej, ",") != tc.rejected {
				t.Fatalf("rejected %v, want %q: %v", rej, tc.rejected, r.Problems)
			}
		})
	}
}

func TestPortMapping(t *testing.T) {
	for name, tc := range map[string]struct {
		gws  []model.Gateway
		want string
	}{
		"privileged alone":                       {[]model.Gateway{gw("a", "203.0.113.1", 80, model.HTTP)}, "http-80=8080"},
		"unprivileged alone":                     {[]model.Gateway{gw("a", "203.0.113.1", 8443, model.HTTP)}, "http-8443=8443"},
		"two VIPs same port same protocol merge": {[]model.Gateway{gw("a", "203.0.113.1", 80, model.HTTP), gw("b", "203.0.113.2", 80, model.HTTP)}, "http-80=8080"},
		"TCP and HTTPS share 8888 (eBay)":        {[]model.Gateway{gw("a", "203.0.113.1", 8888, model.HTTPS), gw("b", "203.0.113.2", 8888, model.TCP)}, "https-8888=18888,tcp-8888-l.b=18889"},
		"mapped port collides with a real one":   {[]model.Gateway{gw("a", "203.0.113.1", 80, model.HTTP), gw("b", "203.0.113.2", 8080, model.HTTP)}, "http-80=8081,http-8080=8080"},
		"admin port is reserved":                 {[]model.Gateway{gw("a", "203.0.113.1", 1901, model.HTTP), gw("b", "203.0.113.2", 1901, model.TCP), gw("c", "203.0.113.3", 9901, model.HTTP)}, "http-1901=11901,tcp-1901-l.b=11902,http-9901=9902"},
	} {
		t.Run(name, func(t *testing.T) {
			for i := range tc.gws {
				if tc.gws[i].Listeners[0].Protocol == model.HTTPS {
					tc.gws[i].Listeners[0].TLS = []model.SNICertificate{{ServerNames: []string{tc.gws[i].Name + ".example.com"}, Certificate: "c"}}
				}
			}
			r := model.Resolve(model.Config{Gateways: tc.gws, Services: []model.Service{svc("a", "", "/")},
				Certificates: []model.Certificate{{Name: "c", Chain: []byte("x"), Key: model.NewPrivateKey([]byte("k"))}}}, nil)
			if len(r.Problems) > 0 {
				t.Fatalf("problems: %v", r.Problems)
			}
			got := names(r.Listeners, func(l model.EnvoyListener) string { return fmt.Sprintf("%s=%d", l.Name, l.Port) })
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPrivateKeyRedacts(t *testing.T) {
	k := model.NewPrivateKey([]byte("TOPSECRET"))
	c := model.Certificate{Name: "c", Key: k}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		for _, v := range []any{k, c, &c} {
			if s := fmt.Sprintf(verb, v); strings.Contains(s, "TOPSECRET") || strings.Contains(s, fmt.Sprintf("%x", "TOPSECRET")) {
				t.Errorf("%s of %T leaks the key: %s", verb, v, s)
			}
		}
	}
	if string(k.Reveal()) != "TOPSECRET" {
		t.Fatal("Reveal lost the key")
	}
}
