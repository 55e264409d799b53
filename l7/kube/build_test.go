package kube

import (
	"fmt"
	"log/slog"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

func TestBuild(t *testing.T) {
	on := map[string]string{api.AnnotationL7: "true"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{api.AnnotationL7: "true"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	shopSvc := model.Service{
		Name: "web.shop", Group: "default", Origin: "web/shop", Namespace: "web",
		Upstreams: []model.Upstream{{Name: "http", Endpoints: []model.Endpoint{{Addr: ap("198.18.0.10:8080"), Weight: 1}, {Addr: ap("198.18.0.11:8080"), Weight: 1}}}},
		Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "http", Weight: 1}}}},
	}
	shopSlices := []*discoveryv1.EndpointSlice{
		slice("web", "shop", "shop-a", "http", 8080, ep{addr: "198.18.0.11"}, ep{addr: "198.18.0.10", ready: boolp(true)}, ep{addr: "198.18.0.12", ready: boolp(false)}),
		slice("web", "shop", "shop-b", "http", 8080, ep{addr: "198.18.0.10"}),
		slice("web", "other", "other-a", "http", 8080, ep{addr: "198.18.0.99"}),
	}
	tests := map[string]struct {
		services []*corev1.Service
		slices   []*discoveryv1.EndpointSlice
		secrets  []*corev1.Secret
		want     map[string]Built
		problems []string
	}{
		"not opted in": {
			services: []*corev1.Service{service("web", "shop", nil, "", port("http", 80)), service("web", "off", map[string]string{api.AnnotationL7: "false"}, "", port("http", 80))},
			want:     map[string]Built{},
		},
		"defaults, ready endpoints only, sorted, once": {
			services: []*corev1.Service{service("web", "shop", on, "", port("http", 80))},
			slices:   shopSlices,
			want:     map[string]Built{"web/shop": {Service: shopSvc}},
		},
		"every annotation": {
			services: []*corev1.Service{service("web", "shop", with(
				api.AnnotationL7Hosts, "shop.example.com, *.shop.example.com",
				api.AnnotationL7PathPrefix, "/cart",
				api.AnnotationL7Group, "edge",
				api.AnnotationL7Timeout, "30s",
				api.AnnotationL7IdleTimeout, "off",
				api.AnnotationL7HTTP2, "true",
				api.AnnotationL7Port, "grpc",
				api.AnnotationL7Delegate, "/cart/api=team-b,/cart/api=team-c,/cart/x=*",
			), "", port("http", 80), port("grpc", 9000))},
			slices: []*discoveryv1.EndpointSlice{slice("web", "shop", "shop-a", "grpc", 9090, ep{addr: "198.18.0.10"})},
			want: map[string]Built{"web/shop": {Service: model.Service{
				Name: "web.shop", Group: "edge", Origin: "web/shop", Namespace: "web", Hosts: []string{"shop.example.com", "*.shop.example.com"},
				Delegations: []model.Delegation{{Prefix: "/cart/api", Namespaces: []string{"team-b", "team-c"}}, {Prefix: "/cart/x", Namespaces: []string{"*"}}},
				Upstreams:   []model.Upstream{{Name: "grpc", HTTP2: true, Endpoints: []model.Endpoint{{Addr: ap("198.18.0.10:9090"), Weight: 1}}}},
				Routes:      []model.Route{{Prefix: "/cart", Targets: []model.WeightedTarget{{Upstream: "grpc", Weight: 1}}, Timeout: 30 * time.Second, IdleTimeout: -1}},
			}}},
		},
		"VIP gives an HTTP gateway listener": {
			services: []*corev1.Service{service("web", "shop", on, "203.0.113.10", port("", 80))},
			want: map[string]Built{"web/shop": {
				Service: model.Service{Name: "web.shop", Group: "default", Origin: "web/shop", Namespace: "web",
					Listeners: []model.ListenerRef{{Gateway: "web.shop", Listener: "port-80"}},
					Upstreams: []model.Upstream{{Name: "port-80"}},
					Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "port-80", Weight: 1}}}}},
				Gateway: &model.Gateway{Name: "web.shop", Group: "default", Origin: "web/shop", Listeners: []model.Listener{
					{Name: "port-80", VIP: netip.MustParseAddr("203.0.113.10"), Port: 80, Protocol: model.HTTP}}},
			}},
		},
		"TLS secret gives an HTTPS listener and a certificate": {
			services: []*corev1.Service{service("web", "shop", with(api.AnnotationL7Hosts, "shop.example.com", api.AnnotationL7TLSSecret, "shop-tls"), "203.0.113.10", port("https", 443))},
			secrets:  []*corev1.Secret{tlsSecret("web", "shop-tls"), tlsSecret("other", "shop-tls")},
			want: map[string]Built{"web/shop": {
				Service: model.Service{Name: "web.shop", Group: "default", Origin: "web/shop", Namespace: "web", Hosts: []string{"shop.example.com"},
					Listeners: []model.ListenerRef{{Gateway: "web.shop", Listener: "https"}},
					Upstreams: []model.Upstream{{Name: "https"}},
					Routes:    []model.Route{{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "https", Weight: 1}}}}},
				Gateway: &model.Gateway{Name: "web.shop", Group: "default", Origin: "web/shop", Listeners: []model.Listener{
					{Name: "https", VIP: netip.MustParseAddr("203.0.113.10"), Port: 443, Protocol: model.HTTPS,
						TLS: []model.SNICertificate{{ServerNames: []string{"shop.example.com"}, Certificate: "web.shop.shop-tls"}}}}},
				Certificate: &model.Certificate{Name: "web.shop.shop-tls", Gateway: model.GatewayID{Name: "web.shop", Origin: "web/shop"}, Origin: "web/shop-tls", Chain: []byte(testChain), Key: model.NewPrivateKey([]byte(testKey))},
			}},
		},
		"bad annotations are each named, the good Service stays": {
			services: []*corev1.Service{
				service("web", "bad", with(api.AnnotationL7Timeout, "5 parsecs", api.AnnotationL7IdleTimeout, "0s", api.AnnotationL7PathPrefix, "cart", api.AnnotationL7HTTP2, "yes"), "", port("http", 80)),
				service("web", "shop", on, "", port("http", 80)),
			},
			slices: shopSlices,
			want:   map[string]Built{"web/shop": {Service: shopSvc}},
			problems: []string{
				`Service web/bad: annotation tlb.io/l7-http2: "yes" is not a boolean; set "true" or "false"`,
				`Service web/bad: annotation tlb.io/l7-idle-timeout: want a positive duration such as "10m" or "off", got "0s"`,
				`Service web/bad: annotation tlb.io/l7-path-prefix: "cart" must start with /`,
				`Service web/bad: annotation tlb.io/l7-timeout: want a positive duration such as "30s" or "off", got "5 parsecs"`,
			},
		},
		"opt-in not a boolean": {
			services: []*corev1.Service{service("web", "bad", map[string]string{api.AnnotationL7: "yes"}, "", port("http", 80))},
			want:     map[string]Built{},
			problems: []string{`Service web/bad: annotation tlb.io/l7: "yes" is not a boolean; set "true" or "false"`},
		},
		"bad host is named by the model check": {
			services: []*corev1.Service{service("web", "bad", with(api.AnnotationL7Hosts, "Shop.Example.com"), "", port("http", 80))},
			want:     map[string]Built{},
			problems: []string{`Service web/bad: annotation tlb.io/l7-hosts: "Shop.Example.com" is not a host name (lower case, an optional leading "*.", or "*")`},
		},
		"unknown port": {
			services: []*corev1.Service{service("web", "bad", with(api.AnnotationL7Port, "grpc"), "", port("http", 80))},
			want:     map[string]Built{},
			problems: []string{`Service web/bad: annotation tlb.io/l7-port: the Service has no port named or numbered "grpc"`},
		},
		"missing secret": {
			services: []*corev1.Service{service("web", "bad", with(api.AnnotationL7Hosts, "a.example.com", api.AnnotationL7TLSSecret, "nope"), "203.0.113.10", port("https", 443))},
			secrets:  []*corev1.Secret{tlsSecret("other", "nope")},
			want:     map[string]Built{},
			problems: []string{`Service web/bad: annotation tlb.io/l7-tls-secret: no Secret web/nope of type kubernetes.io/tls`},
		},
		"secret without a key": {
			services: []*corev1.Service{service("web", "bad", with(api.AnnotationL7Hosts, "a.example.com", api.AnnotationL7TLSSecret, "half"), "203.0.113.10", port("https", 443))},
			secrets: func() []*corev1.Secret {
				s := tlsSecret("web", "half")
				delete(s.Data, corev1.TLSPrivateKeyKey)
				return []*corev1.Secret{s}
			}(),
			want:     map[string]Built{},
			problems: []string{`Service web/bad: annotation tlb.io/l7-tls-secret: Secret web/half: no PEM private key in tls.key`},
		},
		"TLS without hosts": {
			services: []*corev1.Service{service("web", "bad", with(api.AnnotationL7TLSSecret, "shop-tls"), "203.0.113.10", port("https", 443))},
			secrets:  []*corev1.Secret{tlsSecret("web", "shop-tls")},
			want:     map[string]Built{},
			problems: []string{`Service web/bad: annotation tlb.io/l7-tls-secret: needs tlb.io/l7-hosts: an HTTPS listener chooses its certificate by server name`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ps := Build(tc.services, tc.slices, tc.secrets, testNow)
			var msgs []string
			for _, p := range ps {
				msgs = append(msgs, p.Error())
			}
			if !reflect.DeepEqual(msgs, tc.problems) {
				t.Errorf("problems:\n got %q\nwant %q", msgs, tc.problems)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("built:\n got %+v\nwant %+v", got, tc.want)
			}
			for _, m := range msgs {
				if strings.Contains(m, testKeyLine) {
					t.Errorf("a problem carries key material: %s", m)
				}
			}
		})
	}
}

// TestCreationTimeOrdersClaims: the model carries the Service's creation
// time and namespace, which decide conflicts the same way in every replica.
func TestCreationTimeOrdersClaims(t *testing.T) {
	svc := service("web", "shop", map[string]string{api.AnnotationL7: "true", api.AnnotationL7Hosts: "shop.example.com"}, "203.0.113.10", port("http", 80))
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.FixedZone("x", 3600))
	svc.CreationTimestamp = metav1.NewTime(created)
	b, _, ps := BuildService(svc, nil, nil, testNow)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if !b.Service.Created.Equal(created) || !b.Gateway.Created.Equal(created) || b.Service.Namespace != "web" {
		t.Errorf("service created %v namespace %q, gateway created %v", b.Service.Created, b.Service.Namespace, b.Gateway.Created)
	}
	if g := GroupOf(svc); g != "default" {
		t.Errorf("group %q", g)
	}
}

func TestBadDelegation(t *testing.T) {
	svc := service("web", "shop", map[string]string{api.AnnotationL7: "true", api.AnnotationL7Delegate: "api=team-b"}, "", port("http", 80))
	_, _, ps := BuildService(svc, nil, nil, testNow)
	if len(ps) != 1 || ps[0].Annotation != api.AnnotationL7Delegate || !strings.Contains(ps[0].Msg, "prefix=namespace") {
		t.Fatalf("problems: %v", ps)
	}
}

func TestAssembleSorted(t *testing.T) {
	b := func(n string) Built {
		c := model.Certificate{Name: n}
		return Built{Service: model.Service{Name: n}, Gateway: &model.Gateway{Name: n}, Certificate: &c}
	}
	cfg := Assemble(map[string]Built{"b/x": b("b.x"), "a/y": b("a.y"), "a/b": b("a.b")})
	var names []string
	for i := range cfg.Services {
		names = append(names, cfg.Services[i].Name+"|"+cfg.Gateways[i].Name+"|"+cfg.Certificates[i].Name)
	}
	if want := []string{"a.b|a.b|a.b", "a.y|a.y|a.y", "b.x|b.x|b.x"}; !reflect.DeepEqual(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
}

// TestKeyNeverPrinted: the built certificate's key redacts itself in every
// format and in slog output.
func TestKeyNeverPrinted(t *testing.T) {
	got, _ := Build([]*corev1.Service{service("web", "shop", map[string]string{api.AnnotationL7: "true", api.AnnotationL7Hosts: "a.example.com", api.AnnotationL7TLSSecret: "t"}, "203.0.113.10", port("https", 443))},
		nil, []*corev1.Secret{tlsSecret("web", "t")}, testNow)
	c := got["web/shop"].Certificate
	if c == nil || string(c.Key.Reveal()) != testKey {
		t.Fatalf("certificate not built with the key: %v", c)
	}
	var sb strings.Builder
	slog.New(slog.NewJSONHandler(&sb, nil)).Info("built", "cert", *c, "built", got)
	fmt.Fprintf(&sb, "%v %+v %#v %s", *c, got, c.Key, c.Key)
	if strings.Contains(sb.String(), testKeyLine) {
		t.Errorf("key printed: %s", sb.String())
	}
}

func FuzzParseIntent(f *testing.F) {
	for _, s := range [][3]string{{"a.example.com,*.b.example.com", "30s", "off"}, {"", "", ""}, {",", "-1s", "10m"}, {"*", "1h", "0"}} {
		f.Add(s[0], s[1], s[2], "/x", "true")
	}
	f.Fuzz(func(t *testing.T, hosts, timeout, idle, prefix, http2 string) {
		ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7Hosts: hosts, api.AnnotationL7Timeout: timeout, api.AnnotationL7IdleTimeout: idle, api.AnnotationL7PathPrefix: prefix, api.AnnotationL7HTTP2: http2}
		svc := service("ns", "svc", ann, "203.0.113.1", port("http", 80))
		b, ok, ps := BuildService(svc, nil, nil, testNow)
		if !ok {
			t.Fatal("an opted-in Service reported as not opted in")
		}
		for _, p := range ps {
			if p.Namespace != "ns" || p.Name != "svc" || (p.Annotation == "" && p.Field == "") {
				t.Fatalf("problem does not name the Service and annotation: %+v", p)
			}
		}
		if len(ps) == 0 {
			if err := model.CheckService(b.Service); err != nil {
				t.Fatalf("built an invalid service without a problem: %v", err)
			}
			if b.Gateway == nil {
				t.Fatal("a valid Service with a VIP built no gateway")
			}
		}
	})
}
