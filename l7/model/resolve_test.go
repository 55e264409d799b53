package model_test

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

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

// certC gives each gateway its own certificate "c", all with the same
// chain and key.
func certC(gws ...model.Gateway) []model.Certificate {
	var out []model.Certificate
	for _, g := range gws {
		out = append(out, model.Certificate{Name: "c", Gateway: g.ID(), Chain: []byte("chain"), Key: model.NewPrivateKey([]byte("k"))})
	}
	return out
}

func names[T any](xs []T, name func(T) string) string {
	var out []string
	for _, x := range xs {
		out = append(out, name(x))
	}
	return strings.Join(out, ",")
}

// TestConflictsFirstClaimWins: the earlier claim (creation time, then
// origin, then name) keeps a route or a VIP:port, whatever order the
// objects arrive in; the loser alone is rejected and the winner gets no
// problem at all.
func TestConflictsFirstClaimWins(t *testing.T) {
	at := func(s model.Service, sec int) model.Service { s.Created = time.Unix(int64(sec), 0); return s }
	gat := func(g model.Gateway, sec int) model.Gateway { g.Created = time.Unix(int64(sec), 0); return g }
	for name, tc := range map[string]struct {
		cfg      model.Config
		want     string // accepted services or gateways
		rejected string
	}{
		"duplicate route, older wins over the lower name": {
			cfg:  model.Config{Services: []model.Service{at(svc("a", "x.example.com", "/p"), 20), at(svc("z", "x.example.com", "/p"), 10)}},
			want: "z", rejected: "a",
		},
		"duplicate route, same time: origin decides": {
			cfg:  model.Config{Services: []model.Service{svc("z", "x.example.com", "/p"), svc("a", "x.example.com", "/p")}},
			want: "a", rejected: "z",
		},
		"same prefix, other host": {
			cfg:  model.Config{Services: []model.Service{svc("a", "x.example.com", "/p"), svc("b", "y.example.com", "/p")}},
			want: "a,b",
		},
		"port conflict: the older gateway keeps VIP:port": {
			cfg:  model.Config{Services: []model.Service{svc("a", "x.example.com", "/")}, Gateways: []model.Gateway{gat(gw("a", "203.0.113.1", 443, model.HTTPS), 5), gat(gw("b", "203.0.113.1", 443, model.TCP), 1)}},
			want: "b", rejected: "a",
		},
		"same port, other VIPs, TCP and HTTPS: both": {
			cfg:  model.Config{Services: []model.Service{svc("a", "x.example.com", "/")}, Gateways: []model.Gateway{gw("a", "203.0.113.1", 443, model.HTTPS), gw("b", "203.0.113.2", 443, model.TCP)}},
			want: "a,b",
		},
	} {
		t.Run(name, func(t *testing.T) {
			for i := range tc.cfg.Gateways { // HTTPS needs a certificate
				if tc.cfg.Gateways[i].Listeners[0].Protocol == model.HTTPS {
					tc.cfg.Gateways[i].Listeners[0].TLS = []model.SNICertificate{{ServerNames: []string{"x.example.com"}, Certificate: "c"}}
				}
			}
			tc.cfg.Certificates = certC(tc.cfg.Gateways...)
			for _, cfg := range []model.Config{tc.cfg, reversed(tc.cfg)} {
				r := model.Resolve(cfg, model.Options{})
				got := names(r.Config.Services, func(s model.Service) string { return s.Name })
				if len(cfg.Gateways) > 0 {
					got = names(r.Config.Gateways, func(g model.Gateway) string { return g.Name })
				}
				if got != tc.want {
					t.Fatalf("accepted %q, want %q (problems %v)", got, tc.want, r.Problems)
				}
				var rej []string
				for _, p := range r.Problems {
					if !p.Rejected || p.Name == tc.want {
						t.Errorf("problem on the winner or not rejecting: %v", p)
					}
					rej = append(rej, p.Name)
				}
				if strings.Join(rej, ",") != tc.rejected {
					t.Fatalf("rejected %v, want %q: %v", rej, tc.rejected, r.Problems)
				}
			}
		})
	}
}

// reversed returns cfg with its objects in the opposite order: the result
// of Resolve must not depend on it.
func reversed(cfg model.Config) model.Config {
	cfg.Services = slices.Clone(cfg.Services)
	slices.Reverse(cfg.Services)
	cfg.Gateways = slices.Clone(cfg.Gateways)
	slices.Reverse(cfg.Gateways)
	return cfg
}

// TestListenerPerVIPPort: every declared VIP:port is its own listener,
// named by protocol, VIP and port, and nothing is renumbered.
func TestListenerPerVIPPort(t *testing.T) {
	gws := []model.Gateway{gw("a", "203.0.113.1", 80, model.HTTP), gw("b", "203.0.113.2", 80, model.HTTP),
		gw("c", "203.0.113.1", 8888, model.HTTPS), gw("d", "203.0.113.2", 8888, model.TCP)}
	gws[2].Listeners[0].TLS = []model.SNICertificate{{ServerNames: []string{"x.example.com"}, Certificate: "c"}}
	gws[3].Listeners[0].Target = "s/u"
	s := svc("s", "x.example.com", "/")
	r := model.Resolve(model.Config{Gateways: gws, Services: []model.Service{s}, Certificates: certC(gws...)}, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	got := names(r.Listeners, func(l model.EnvoyListener) string { return fmt.Sprintf("%s=%s:%d", l.Name, l.VIP, l.Port) })
	want := "http-203.0.113.1-80=203.0.113.1:80,http-203.0.113.2-80=203.0.113.2:80,https-203.0.113.1-8888=203.0.113.1:8888,tcp-203.0.113.2-8888=203.0.113.2:8888"
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// TestServicesOnlyOnTheirListeners: a service is served on the listeners
// it names and nowhere else; a reference that cannot be served is reported
// and leaves the rest of the service alone.
func TestServicesOnlyOnTheirListeners(t *testing.T) {
	web := gw("pub", "203.0.113.1", 80, model.HTTP)
	web.Listeners = append(web.Listeners,
		model.Listener{Name: "tls", VIP: netip.MustParseAddr("203.0.113.1"), Port: 443, Protocol: model.HTTPS, TLS: []model.SNICertificate{{ServerNames: []string{"*.a.example.com"}, Certificate: "c"}}},
		model.Listener{Name: "redir", VIP: netip.MustParseAddr("203.0.113.2"), Port: 80, Protocol: model.HTTP, RedirectHTTPS: true})
	other := gw("other", "203.0.113.3", 80, model.HTTP)
	a := svc("a", "www.a.example.com", "/")
	a.Listeners = []model.ListenerRef{{Gateway: "pub", Listener: "l"}, {Gateway: "pub", Listener: "tls"}}
	b := svc("b", "b.example.com", "/")
	b.Listeners = []model.ListenerRef{{Gateway: "pub", Listener: "tls"}, {Gateway: "pub", Listener: "redir"}, {Gateway: "nope", Listener: "x"}}
	r := model.Resolve(model.Config{Gateways: []model.Gateway{web, other}, Services: []model.Service{a, b}, Certificates: certC(web, other)}, model.Options{})
	got := names(r.Listeners, func(l model.EnvoyListener) string { return l.Name + "=" + strings.Join(l.Services, "+") })
	want := "http-203.0.113.1-80=a,http-203.0.113.2-80=,http-203.0.113.3-80=,https-203.0.113.1-443=a+b"
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	var msgs []string
	for _, p := range r.Problems {
		if p.Rejected || p.Name != "b" {
			t.Errorf("want only non-rejecting problems on b, got %v", p)
		}
		msgs = append(msgs, p.Field+": "+p.Msg)
	}
	for _, w := range []string{`listeners[0]: no certificate of listener "pub/tls" covers host "b.example.com"`, `listeners[1]: listener "pub/redir" redirects`, `listeners[2]: no listener "nope/x"`} {
		if !strings.Contains(strings.Join(msgs, "\n"), w) {
			t.Errorf("no problem %q in %v", w, msgs)
		}
	}
}

// TestHostOwnership: the first namespace to claim a host owns it; others
// need a delegation for every route; the catch-all is the operator's and
// the listed namespaces'.
func TestHostOwnership(t *testing.T) {
	in := func(s model.Service, ns string, sec int) model.Service {
		s.Namespace, s.Created, s.Origin = ns, time.Unix(int64(sec), 0), model.Origin(ns+"/"+s.Name)
		return s
	}
	delegate := func(s model.Service, prefix string, nss ...string) model.Service {
		s.Delegations = append(s.Delegations, model.Delegation{Prefix: prefix, Namespaces: nss})
		return s
	}
	for name, tc := range map[string]struct {
		svcs     []model.Service
		opts     model.Options
		want     string
		rejected string
		msg      string
	}{
		"another namespace cannot take an owned host": {
			svcs: []model.Service{in(svc("shop", "shop.example.com", "/"), "team-a", 1), in(svc("evil", "shop.example.com", "/login"), "team-b", 2)},
			want: "shop", rejected: "evil", msg: `host "shop.example.com" belongs to namespace "team-a" (service "shop", team-a/shop), which has not delegated routes[0] (prefix "/login") to namespace "team-b"`,
		},
		"the owner's namespace shares its host by path": {
			svcs: []model.Service{in(svc("shop", "shop.example.com", "/"), "team-a", 1), in(svc("cart", "shop.example.com", "/cart"), "team-a", 2)},
			want: "cart,shop",
		},
		"a delegated prefix may be taken": {
			svcs: []model.Service{delegate(in(svc("shop", "shop.example.com", "/"), "team-a", 1), "/api", "team-b"), in(svc("api", "shop.example.com", "/api/v1"), "team-b", 2)},
			want: "api,shop",
		},
		"a delegation to another namespace does not help": {
			svcs: []model.Service{delegate(in(svc("shop", "shop.example.com", "/"), "team-a", 1), "/api", "team-c"), in(svc("api", "shop.example.com", "/api"), "team-b", 2)},
			want: "shop", rejected: "api",
		},
		"outside the delegated prefix": {
			svcs: []model.Service{delegate(in(svc("shop", "shop.example.com", "/"), "team-a", 1), "/api", "team-b"), in(svc("api", "shop.example.com", "/admin"), "team-b", 2)},
			want: "shop", rejected: "api",
		},
		"a newer owner-side service can delegate to an older claimant": {
			svcs: []model.Service{in(svc("shop", "shop.example.com", "/"), "team-a", 1), in(svc("api", "shop.example.com", "/api"), "team-b", 2), delegate(in(svc("more", "shop.example.com", "/more"), "team-a", 3), "/api", "*")},
			want: "api,more,shop",
		},
		"the older claim owns, whatever the names": {
			svcs: []model.Service{in(svc("a", "x.example.com", "/a"), "team-z", 9), in(svc("z", "x.example.com", "/z"), "team-a", 1)},
			want: "z", rejected: "a",
		},
		"the DSL (operator) owns before any namespace": {
			svcs: []model.Service{in(svc("k", "x.example.com", "/k"), "team-a", 1), svc("dsl", "x.example.com", "/")},
			want: "dsl", rejected: "k",
		},
		"a broken owner keeps its host": {
			svcs:     []model.Service{in(svc("shop", "shop.example.com", "no-slash"), "team-a", 1), in(svc("evil", "shop.example.com", "/"), "team-b", 2)},
			rejected: "shop,evil",
		},
		"an unlisted catch-all claim does not block a listed one": {
			svcs: []model.Service{in(svc("early", "", "/"), "team-x", 1), in(svc("any", "", "/"), "team-a", 2)}, opts: model.Options{CatchAllNamespaces: []string{"team-a"}},
			want: "any", rejected: "early",
		},
		"catch-all refused to an unlisted namespace": {
			svcs:     []model.Service{in(svc("any", "", "/"), "team-a", 1)},
			rejected: "any", msg: `the catch-all host "*"`,
		},
		"catch-all allowed to a listed namespace": {
			svcs: []model.Service{in(svc("any", "", "/"), "team-a", 1)}, opts: model.Options{CatchAllNamespaces: []string{"team-a"}},
			want: "any",
		},
		"catch-all from the DSL": {
			svcs: []model.Service{svc("any", "", "/")},
			want: "any",
		},
	} {
		t.Run(name, func(t *testing.T) {
			for _, cfg := range []model.Config{{Services: tc.svcs}, reversed(model.Config{Services: tc.svcs})} {
				r := model.Resolve(cfg, tc.opts)
				if got := names(r.Config.Services, func(s model.Service) string { return s.Name }); got != tc.want {
					t.Fatalf("accepted %q, want %q: %v", got, tc.want, r.Problems)
				}
				var rej []string
				for _, p := range r.Problems {
					rej = append(rej, p.Name)
					if tc.msg != "" && !strings.Contains(p.Msg, tc.msg) {
						t.Errorf("problem %q does not say %q", p.Msg, tc.msg)
					}
				}
				if strings.Join(rej, ",") != tc.rejected {
					t.Fatalf("rejected %v, want %q: %v", rej, tc.rejected, r.Problems)
				}
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
