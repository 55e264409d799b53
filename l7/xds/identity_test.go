package xds_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"math/big"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
)

// pki is a throw-away CA that signs server and client certificates.
type pki struct {
	ca  *x509.Certificate
	key *ecdsa.PrivateKey
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &pki{ca: ca, key: key}
}

// issue returns a certificate for the loopback server (server) or a client
// with the given URI SANs.
func (p *pki) issue(t *testing.T, server bool, uris ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	for _, u := range uris {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, pu)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func (p *pki) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	return pool
}

// startTLSServer runs a server of group edge behind mutual TLS, as l7
// serve does off the pod's unix socket.
func startTLSServer(t *testing.T, p *pki) (*running, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	reg := prometheus.NewRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	srv := xds.New(ctx, slog.New(slog.NewTextHandler(logs, nil)), reg, time.Now, xds.Options{Group: "edge", Kinds: []translate.Kind{translate.Gateway, translate.GRPC}})
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{p.issue(t, true)}, ClientCAs: p.pool(),
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
	gs := grpc.NewServer(grpc.Creds(creds))
	srv.Register(gs)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(func() { gs.Stop(); cancel() })
	cfg := edgeConfig("198.51.100.20:8080")
	// Group "other" with its own key, published to the same server: it must
	// never leave it.
	cfg.Gateways = append(cfg.Gateways, model.Gateway{Name: "other", Group: "other", Listeners: []model.Listener{
		{Name: "tls", VIP: ap("203.0.113.99:1").Addr(), Port: 443, Protocol: model.HTTPS, TLS: []model.SNICertificate{{ServerNames: []string{"other.example.com"}, Certificate: "other"}}}}})
	cfg.Certificates = append(cfg.Certificates, model.Certificate{Name: "other", Gateway: model.GatewayID{Name: "other"}, Chain: []byte(testChain), Key: model.NewPrivateKey([]byte(otherKey))})
	pub := publisher(srv)
	pub.Publish(context.Background(), cfg)
	return &running{srv: srv, pub: pub, reg: reg, logs: logs, addr: lis.Addr().String(), gs: gs}, lis.Addr().String()
}

const otherKey = "-----BEGIN PRIVATE KEY-----\nOTHERGROUPKEYMATERIAL0123456789\n-----END PRIVATE KEY-----\n"

func dialTLS(t *testing.T, p *pki, addr string, cert tls.Certificate) *grpc.ClientConn {
	t.Helper()
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: p.pool(), MinVersion: tls.VersionTLS12})
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// TestIdentityDecidesWhatIsServed: over mutual TLS, the URI SAN of the
// client certificate says which kind of which group a client may be; what
// its node message claims does not. A proxyless gRPC identity never
// receives a Secret; nothing of group "other" (published to the same
// server) reaches a client of group edge.
func TestIdentityDecidesWhatIsServed(t *testing.T) {
	p := newPKI(t)
	r, addr := startTLSServer(t, p)
	td := xds.DefaultTrustDomain
	for name, tc := range map[string]struct {
		uris       []string
		kind       string
		group      string
		code       codes.Code // OK: served
		wantSecret bool
	}{
		"gateway identity, gateway of its group":      {[]string{xds.SPIFFEID(td, translate.Gateway, "edge")}, "gateway", "edge", codes.OK, true},
		"grpc identity claims to be a gateway":        {[]string{xds.SPIFFEID(td, translate.GRPC, "edge")}, "gateway", "edge", codes.PermissionDenied, false},
		"grpc identity as grpc":                       {[]string{xds.SPIFFEID(td, translate.GRPC, "edge")}, "grpc", "edge", codes.OK, false},
		"gateway of another group claims edge":        {[]string{xds.SPIFFEID(td, translate.Gateway, "other")}, "gateway", "edge", codes.PermissionDenied, false},
		"identity of another trust domain":            {[]string{xds.SPIFFEID("evil.example", translate.Gateway, "edge")}, "gateway", "edge", codes.PermissionDenied, false},
		"no identity at all":                          {nil, "gateway", "edge", codes.PermissionDenied, false},
		"a group this server does not serve":          {[]string{xds.SPIFFEID(td, translate.Gateway, "other")}, "gateway", "other", codes.PermissionDenied, false},
		"two URI SANs (an SVID has one): nothing":     {[]string{xds.SPIFFEID(td, translate.GRPC, "edge"), xds.SPIFFEID(td, translate.Gateway, "edge")}, "gateway", "edge", codes.PermissionDenied, false},
		"two URI SANs, as the kind of the first":      {[]string{xds.SPIFFEID(td, translate.GRPC, "edge"), xds.SPIFFEID(td, translate.Gateway, "edge")}, "grpc", "edge", codes.PermissionDenied, false},
		"a path that only looks like a grant (extra)": {[]string{"spiffe://" + td + "/tlb/l7/gateway/edge/x"}, "gateway", "edge", codes.PermissionDenied, false},
	} {
		t.Run(name, func(t *testing.T) {
			cc := dialTLS(t, p, addr, p.issue(t, false, tc.uris...))
			c := newSotw(t, cc, node("n-"+tc.kind, tc.group, tc.kind, schema))
			c.request(resource.SecretType, []string{"shop", "other"}, "", "", nil)
			c.request(resource.ListenerType, nil, "", "", nil)
			got := map[string]bool{}
			for range 2 {
				resp, err := c.next(5 * time.Second)
				if tc.code != codes.OK {
					if status.Code(err) != tc.code {
						t.Fatalf("got %v (%v), want %v", resp.GetTypeUrl(), err, tc.code)
					}
					return
				}
				if err != nil {
					if !tc.wantSecret && got[resource.ListenerType] {
						break // a gRPC client has no Secret to be sent: nothing comes
					}
					t.Fatal(err)
				}
				got[resp.GetTypeUrl()] = true
				for _, res := range decode(t, resp.GetResources()) {
					if s, ok := res.(*tlsv3.Secret); ok && (s.GetName() != "shop" || strings.Contains(string(s.GetTlsCertificate().GetPrivateKey().GetInlineBytes()), "OTHERGROUP")) {
						t.Fatalf("a client of edge received secret %s", s.GetName())
					}
				}
			}
			if got[resource.SecretType] != tc.wantSecret || !got[resource.ListenerType] {
				t.Fatalf("received %v, want a secret: %v", got, tc.wantSecret)
			}
		})
	}
	if v := metricValue(t, r.reg, "tlb_l7_xds_refused_streams_total", map[string]string{"reason": "identity"}); v < 6 {
		t.Errorf("refused (identity) = %v, want >= 6", v)
	}
}

// TestPlainTCPIsNobody (issue 22, finding 2): gateway pods share the
// node's network, so a stream over plain TCP, even from loopback, may come
// from any user of the node. It is refused like a client without a
// certificate, SotW and delta, and gets no key; the same server on a unix
// socket serves the pod's Envoy. On main a loopback TCP peer was taken for
// the pod itself and given the group's private keys.
func TestPlainTCPIsNobody(t *testing.T) {
	r := startServer(t, "")
	r.pub.Publish(context.Background(), edgeConfig("198.51.100.20:8080"))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.gs.Serve(lis) }() // the same gRPC server, also on loopback TCP
	tcp := dial(t, lis.Addr().String())

	s := newSotw(t, tcp, node("nobody", "edge", "gateway", schema))
	s.request(resource.SecretType, []string{"shop"}, "", "", nil)
	if resp, err := s.next(5 * time.Second); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("SotW over loopback TCP: got %d resources of %s (%v), want PermissionDenied", len(resp.GetResources()), resp.GetTypeUrl(), err)
	}
	d := newDelta(t, tcp, node("nobody", "edge", "gateway", schema))
	d.subscribe(resource.SecretType, []string{"shop"}, nil)
	if resp, err := d.next(5 * time.Second); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("delta over loopback TCP: got %d resources (%v), want PermissionDenied", len(resp.GetResources()), err)
	}

	local := newSotw(t, dial(t, r.addr), node("gw-1", "edge", "gateway", schema))
	local.request(resource.SecretType, []string{"shop"}, "", "", nil)
	resp, err := local.next(5 * time.Second)
	if err != nil || len(resp.GetResources()) != 1 {
		t.Fatalf("the pod's unix socket must still serve the key: %v", err)
	}
}
