package translate

import (
	"hash"
	"maps"
	"net/netip"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
)

// WriteReference writes to h what this build's translator makes of a
// reference config that exercises every kind of listener, route and
// upstream, for both kinds of client: type URLs and deterministic
// encodings, in order. A change of the translator or of the Envoy API
// types it fills changes the bytes (xds.Generation hashes them).
func WriteReference(h hash.Hash) {
	r := model.Resolve(referenceConfig(), model.Options{})
	for _, kind := range []Kind{Gateway, GRPC} {
		set := Group(r, "reference", kind)
		for _, typ := range slices.Sorted(maps.Keys(set)) {
			h.Write([]byte(typ))
			for _, res := range set[typ] {
				b, err := proto.MarshalOptions{Deterministic: true}.Marshal(res)
				if err != nil {
					panic("translate: encode reference resource: " + err.Error())
				}
				h.Write(b)
			}
		}
	}
}

// referenceConfig exercises every listener protocol, TLS, a redirect, and
// every route and upstream feature the translator knows, including the
// gateway functions (interceptors, JWT, roles, CORS).
func referenceConfig() model.Config {
	vip := netip.MustParseAddr("192.0.2.1")
	ep := []model.Endpoint{{Addr: netip.MustParseAddrPort("192.0.2.10:8080"), Weight: 1}}
	return model.Config{
		Certificates: []model.Certificate{{Name: "ref.cert", Gateway: model.GatewayID{Name: "ref"}, Chain: []byte("-----BEGIN CERTIFICATE-----\n"), Key: model.NewPrivateKey([]byte("-----BEGIN PRIVATE KEY-----\n"))}},
		Gateways: []model.Gateway{{Name: "ref", Group: "reference", Listeners: []model.Listener{
			{Name: "web", VIP: vip, Port: 80, Protocol: model.HTTP, RedirectHTTPS: true},
			{Name: "alt", VIP: vip, Port: 8080, Protocol: model.HTTP},
			{Name: "secure", VIP: vip, Port: 443, Protocol: model.HTTPS, TLS: []model.SNICertificate{{ServerNames: []string{"ref.example"}, Certificate: "ref.cert"}}},
			{Name: "db", VIP: vip, Port: 5432, Protocol: model.TCP, Target: "ref/main"},
		}}},
		Services: []model.Service{{
			Name: "ref", Group: "reference", Hosts: []string{"ref.example"},
			JWT: &model.JWT{JWKS: `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`, Cookie: "t",
				ClaimHeaders: map[string]string{"sub": "x-sub"}, Required: true},
			Listeners: []model.ListenerRef{{Gateway: "ref", Listener: "alt"}, {Gateway: "ref", Listener: "secure"}},
			Upstreams: []model.Upstream{
				{Name: "main", Endpoints: ep, HealthCheck: &model.HealthCheck{Protocol: model.HealthHTTP, Path: "/healthz"}},
				{Name: "h2", HTTP2: true, Endpoints: ep, HealthCheck: &model.HealthCheck{Protocol: model.HealthGRPC}},
				{Name: "named", DNS: &model.DNSName{Host: "ref.internal", Port: 8080}},
			},
			Routes: []model.Route{
				{Prefix: "/", Targets: []model.WeightedTarget{{Upstream: "main", Weight: 1}}, Retries: &model.RetryPolicy{Attempts: 1},
					Interceptors: chain.Chain{{Type: chain.TypeSession}}, Auth: &model.RouteAuth{Roles: []string{"a"}, RolesAll: []string{"b"}},
					CORS: &model.CORSPolicy{Origins: []string{"*"}, Methods: []string{"GET"}}},
				{Regex: "^/a/.*$", Headers: []model.HeaderMatch{{Name: "x-a", Exact: "1"}, {Name: "x-b", Present: true}},
					Targets: []model.WeightedTarget{{Upstream: "main", Weight: 1}, {Upstream: "h2", Weight: 3}},
					Rewrite: &model.Rewrite{Regex: "^/a/", Substitution: "/"}, IdleTimeout: -1,
					Sticky: &model.CookieSticky{Cookie: "s", Path: "/"}},
				{Prefix: "/named", Targets: []model.WeightedTarget{{Upstream: "named", Weight: 1}}},
			},
		}},
	}
}
