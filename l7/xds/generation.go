package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/netip"
	"runtime/debug"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// Generation is the schema generation this build serves: "tlb.l7." and a
// hash of the build's version (a release tag, or "dev") and of what its
// translator makes of a reference config that exercises every kind of
// listener, route and upstream (so a change of the Envoy API types it
// fills shows too). A change to any of them is a new generation, without anyone
// having to remember to bump a constant. Gateways declare the generation
// of the l7 that wrote their bootstrap (node metadata "tlb.schema"); the
// server refuses any other, so a gateway never mixes two generations.
func Generation() string {
	h := sha256.New()
	h.Write([]byte(buildVersion()))
	h.Write([]byte{0})
	r := model.Resolve(referenceConfig(), model.Options{})
	for _, kind := range []translate.Kind{translate.Gateway, translate.GRPC} {
		set := translate.Group(r, "reference", kind)
		for _, typ := range slices.Sorted(maps.Keys(set)) {
			h.Write([]byte(typ))
			for _, res := range set[typ] {
				b, err := proto.MarshalOptions{Deterministic: true}.Marshal(res)
				if err != nil {
					panic("xds: encode reference resource: " + err.Error())
				}
				h.Write(b)
			}
		}
	}
	return "tlb.l7." + hex.EncodeToString(h.Sum(nil))[:12]
}

// buildVersion is the main module's version when the binary was built
// from a release tag, else "dev". (Test binaries carry no module
// information, so nothing else from the build info can be used: the
// generation a test declares must be the one its server serves.)
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if mv := bi.Main.Version; strings.HasPrefix(mv, "v") && !strings.Contains(mv, "-") && !strings.Contains(mv, "+") {
		return mv
	}
	return "dev"
}

// referenceConfig exercises every listener protocol, TLS, a redirect, and
// every route and upstream feature the translator knows, including the
// gateway functions (interceptors, JWT, roles, CORS).
func referenceConfig() model.Config {
	vip := netip.MustParseAddr("192.0.2.1")
	ep := []model.Endpoint{{Addr: netip.MustParseAddrPort("192.0.2.10:8080"), Weight: 1}}
	return model.Config{
		Certificates: []model.Certificate{{Name: "ref.cert", Chain: []byte("-----BEGIN CERTIFICATE-----\n"), Key: model.NewPrivateKey([]byte("-----BEGIN PRIVATE KEY-----\n"))}},
		Gateways: []model.Gateway{{Name: "ref", Group: "reference", Listeners: []model.Listener{
			{Name: "web", VIP: vip, Port: 80, Protocol: model.HTTP, RedirectHTTPS: true},
			{Name: "alt", VIP: vip, Port: 8080, Protocol: model.HTTP},
			{Name: "secure", VIP: vip, Port: 443, Protocol: model.HTTPS, TLS: []model.SNICertificate{{ServerNames: []string{"ref.example"}, Certificate: "ref.cert"}}},
			{Name: "db", VIP: vip, Port: 5432, Protocol: model.TCP, Target: "ref/main"},
		}}},
		Services: []model.Service{{
			Name: "ref", Group: "reference", Hosts: []string{"ref.example"},
			JWT: &model.JWT{JWKS: `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"cmVm"}]}`, Cookie: "t",
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
