package translate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

const tlsGateway = `kind: gateway/gateway/v1
name: gw
group: g
listeners:
  - name: plain
    vip: 203.0.113.1
    port: 443
    protocol: HTTPS
    certificates:
      - {name: a, sni: [a.example.com], certFile: shop.crt, keyFile: shop.key}
      - {name: b, sni: [b.example.com], certFile: shop.crt, keyFile: shop.key}
  - name: strict
    vip: 203.0.113.2
    port: 443
    protocol: HTTPS
    tls: {minVersion: 1.3}
    clientCertificate: {caFile: ca.crt, required: false}
    certificates:
      - {name: a, sni: [a.example.com], certFile: shop.crt, keyFile: shop.key}
  - name: forward
    vip: 203.0.113.3
    port: 443
    protocol: HTTPS
    tls: {cipherSuites: [ECDHE-ECDSA-AES256-GCM-SHA384, ECDHE-RSA-AES256-GCM-SHA384]}
    clientCertificate: {caFile: ca.crt, forwardClientCert: true}
    certificates:
      - {name: a, sni: [a.example.com], certFile: shop.crt, keyFile: shop.key}
  - {name: web, vip: 203.0.113.1, port: 80, protocol: HTTP}
`

const tlsUpstreams = `kind: gateway/service/v1
name: app
group: g
hosts: [a.example.com]
listeners: [gw/plain, gw/web]
upstreams:
  - {name: clear, endpoints: ["198.51.100.1:80"]}
  - name: secure
    endpoints: ["198.51.100.2:443"]
    tls: {sni: secure.internal, caFile: ca.crt}
  - name: grpc
    http2: true
    endpoints: ["198.51.100.3:443"]
    tls: {sni: grpc.internal, caFile: ca.crt, subjectAltNames: [grpc-1.internal, grpc-2.internal]}
routes:
  - {prefix: /s, target: secure}
  - {prefix: /g, target: grpc}
  - {prefix: /, target: clear}
`

// tlsDir loads the TLS gateway and service from a directory holding the
// example's certificate and test CA, as l7 serve does.
func tlsDir(t *testing.T, docs ...string) (model.Resolved, []byte) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"shop.crt": "../testdata/config/certs/shop.crt", "shop.key": "../testdata/config/certs/shop.key", "ca.crt": "../testdata/config/certs/test-ca.crt"}
	for name, src := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i, d := range docs {
		if err := os.WriteFile(filepath.Join(dir, string(rune('a'+i))+".yaml"), []byte(d), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, errs, err := dsl.NewDir(dir, time.Now).Load()
	if err != nil || len(errs) > 0 {
		t.Fatalf("load: %v %v", err, errs)
	}
	r := resolve(t, cfg, model.Options{})
	if len(r.Problems) > 0 {
		t.Fatal(r.Problems)
	}
	ca, _ := os.ReadFile(files["ca.crt"])
	return r, ca
}

type chainTLS struct {
	tls *tls.DownstreamTlsContext
	hcm *hcm.HttpConnectionManager
}

// listenerTLS returns, per listener, the TLS context and connection
// manager of each filter chain.
func listenerTLS(t *testing.T, set translate.Resources) map[string][]chainTLS {
	t.Helper()
	out := map[string][]chainTLS{}
	for _, res := range set[resource.ListenerType] {
		l := res.(*listener.Listener)
		for _, fc := range l.GetFilterChains() {
			var c chainTLS
			if ts := fc.GetTransportSocket(); ts != nil {
				c.tls = &tls.DownstreamTlsContext{}
				if err := ts.GetTypedConfig().UnmarshalTo(c.tls); err != nil {
					t.Fatal(err)
				}
			}
			if f := fc.GetFilters()[0]; f.GetName() == "envoy.filters.network.http_connection_manager" {
				c.hcm = &hcm.HttpConnectionManager{}
				if err := f.GetTypedConfig().UnmarshalTo(c.hcm); err != nil {
					t.Fatal(err)
				}
			}
			out[l.GetName()] = append(out[l.GetName()], c)
		}
	}
	return out
}

var defaultParams = &tls.TlsParameters{
	TlsMinimumProtocolVersion: tls.TlsParameters_TLSv1_2,
	TlsMaximumProtocolVersion: tls.TlsParameters_TLSv1_3,
	CipherSuites: []string{"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
		"ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
		"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
	EcdhCurves: []string{"X25519", "P-256"},
}

// TestTLSPolicyPerListener: every filter chain of an HTTPS listener
// without a policy has the defaults; a listener's minimum version or
// cipher suites change that listener only; client certificates are asked
// for, and x-forwarded-client-cert set, only where the listener says so.
func TestTLSPolicyPerListener(t *testing.T) {
	r, ca := tlsDir(t, tlsGateway, tlsUpstreams)
	gatewaySet(t, r) // valid, and the cache builds the same
	ls := listenerTLS(t, translate.Group(r, "g", translate.Gateway))

	plain := ls["https-203.0.113.1-443"]
	if len(plain) != 2 {
		t.Fatalf("plain has %d filter chains, want 2", len(plain))
	}
	for i, c := range plain {
		if !proto.Equal(c.tls.GetCommonTlsContext().GetTlsParams(), defaultParams) {
			t.Errorf("plain chain %d params = %v, want the defaults", i, c.tls.GetCommonTlsContext().GetTlsParams())
		}
		if c.tls.GetCommonTlsContext().GetValidationContext() != nil || c.tls.GetRequireClientCertificate() != nil {
			t.Errorf("plain chain %d asks for client certificates: %v", i, c.tls)
		}
		if c.hcm.GetForwardClientCertDetails() != hcm.HttpConnectionManager_SANITIZE || c.hcm.GetSetCurrentClientCertDetails() != nil {
			t.Errorf("plain chain %d forwards client certificates: %v", i, c.hcm.GetForwardClientCertDetails())
		}
	}

	strict := ls["https-203.0.113.2-443"][0]
	want := &tls.TlsParameters{TlsMinimumProtocolVersion: tls.TlsParameters_TLSv1_3, TlsMaximumProtocolVersion: tls.TlsParameters_TLSv1_3,
		EcdhCurves: []string{"X25519", "P-256"}}
	if got := strict.tls.GetCommonTlsContext().GetTlsParams(); !proto.Equal(got, want) {
		t.Errorf("strict params = %v, want %v", got, want)
	}
	if v := strict.tls.GetRequireClientCertificate(); v == nil || v.GetValue() {
		t.Errorf("strict require_client_certificate = %v, want an explicit false", v)
	}
	if got := strict.tls.GetCommonTlsContext().GetValidationContext().GetTrustedCa().GetInlineBytes(); !bytes.Equal(got, ca) {
		t.Errorf("strict trusted CA = %q, want the CA file", got)
	}
	if strict.hcm.GetForwardClientCertDetails() != hcm.HttpConnectionManager_SANITIZE {
		t.Errorf("strict forwards client certificates without being asked")
	}

	fwd := ls["https-203.0.113.3-443"][0]
	if got := fwd.tls.GetCommonTlsContext().GetTlsParams(); got.GetTlsMinimumProtocolVersion() != tls.TlsParameters_TLSv1_2 ||
		!slices.Equal(got.GetCipherSuites(), []string{"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384"}) {
		t.Errorf("forward params = %v, want its two suites over TLS 1.2+", got)
	}
	if !fwd.tls.GetRequireClientCertificate().GetValue() {
		t.Error("forward: required defaults to true")
	}
	if fwd.hcm.GetForwardClientCertDetails() != hcm.HttpConnectionManager_SANITIZE_SET {
		t.Errorf("forward xfcc = %v, want SANITIZE_SET", fwd.hcm.GetForwardClientCertDetails())
	}
	if d := fwd.hcm.GetSetCurrentClientCertDetails(); !d.GetSubject().GetValue() || !d.GetUri() || !d.GetDns() || d.GetCert() || d.GetChain() {
		t.Errorf("forward xfcc details = %v, want subject, URI and DNS only", d)
	}

	if web := ls["http-203.0.113.1-80"][0]; web.tls != nil || web.hcm.GetForwardClientCertDetails() != hcm.HttpConnectionManager_SANITIZE {
		t.Errorf("the HTTP listener has TLS or forwards client certificates")
	}
}

// TestUpstreamTLSOnlyWhereAsked: only the upstreams with tls get a
// transport socket, with their SNI, CA, names to verify (the SNI by
// default) and the ALPN of the protocol they speak.
func TestUpstreamTLSOnlyWhereAsked(t *testing.T) {
	r, ca := tlsDir(t, tlsGateway, tlsUpstreams)
	gatewaySet(t, r)
	clusters := map[string]*cluster.Cluster{}
	for _, res := range translate.Group(r, "g", translate.Gateway)[resource.ClusterType] {
		c := res.(*cluster.Cluster)
		clusters[c.GetName()] = c
	}
	if ts := clusters["app/clear"].GetTransportSocket(); ts != nil {
		t.Errorf("app/clear has a transport socket: %v", ts)
	}
	for name, want := range map[string]struct {
		sni  string
		sans []string
		alpn []string
	}{
		"app/secure": {"secure.internal", []string{"secure.internal"}, []string{"http/1.1"}},
		"app/grpc":   {"grpc.internal", []string{"grpc-1.internal", "grpc-2.internal"}, []string{"h2"}},
	} {
		ts := clusters[name].GetTransportSocket()
		if ts.GetName() != "envoy.transport_sockets.tls" {
			t.Fatalf("%s transport socket = %v", name, ts)
		}
		var ctx tls.UpstreamTlsContext
		if err := ts.GetTypedConfig().UnmarshalTo(&ctx); err != nil {
			t.Fatal(err)
		}
		vc := ctx.GetCommonTlsContext().GetValidationContext()
		var sans []string
		for _, m := range vc.GetMatchTypedSubjectAltNames() {
			if m.GetSanType() != tls.SubjectAltNameMatcher_DNS {
				t.Errorf("%s SAN type %v", name, m.GetSanType())
			}
			sans = append(sans, m.GetMatcher().GetExact())
		}
		if ctx.GetSni() != want.sni || !slices.Equal(sans, want.sans) || !slices.Equal(ctx.GetCommonTlsContext().GetAlpnProtocols(), want.alpn) ||
			!bytes.Equal(vc.GetTrustedCa().GetInlineBytes(), ca) {
			t.Errorf("%s: sni %q, sans %v, alpn %v; want %+v and the CA", name, ctx.GetSni(), sans, ctx.GetCommonTlsContext().GetAlpnProtocols(), want)
		}
		if ctx.GetCommonTlsContext().GetTlsParams().GetTlsMinimumProtocolVersion() != tls.TlsParameters_TLSv1_2 {
			t.Errorf("%s minimum version %v", name, ctx.GetCommonTlsContext().GetTlsParams())
		}
	}
}

// TestTLSCacheSeesInPlaceChanges: a policy changed in place in the
// caller's model is seen by the cache (it keeps its own copy).
func TestTLSCacheSeesInPlaceChanges(t *testing.T) {
	r, _ := tlsDir(t, tlsGateway, tlsUpstreams)
	c := translate.NewCache()
	c.ForKind(r, "g", translate.Gateway, c.Shared(r, "g"))
	for i := range r.Listeners {
		if p := r.Listeners[i].TLSPolicy; p != nil && len(p.CipherSuites) > 0 {
			p.CipherSuites[0] = "ECDHE-RSA-CHACHA20-POLY1305"
		}
	}
	for i := range r.Config.Services {
		for j := range r.Config.Services[i].Upstreams {
			if u := r.Config.Services[i].Upstreams[j].TLS; u != nil {
				u.SNI = "changed.internal"
			}
		}
	}
	got := c.ForKind(r, "g", translate.Gateway, c.Shared(r, "g"))
	want := translate.Group(r, "g", translate.Gateway)
	for _, typ := range []string{resource.ListenerType, resource.ClusterType} {
		if len(got[typ]) != len(want[typ]) {
			t.Fatalf("%s: %d, want %d", typ, len(got[typ]), len(want[typ]))
		}
		for i := range want[typ] {
			if !proto.Equal(got[typ][i], want[typ][i]) {
				t.Errorf("%s[%d]: the cache kept the old TLS settings", typ, i)
			}
		}
	}
}
