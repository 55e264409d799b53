package upstream

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUpstreamTLS: an upstream with tls verifies the backend's
// certificate against the configured CA and name. The right CA and name
// reach the backend over TLS with the SNI and ALPN the DSL asks for; a
// wrong CA, a wrong subjectAltName or an SNI the certificate does not
// name fail the handshake in Envoy, which answers 503 (docs/l7.md, "TLS
// to an upstream") without a request reaching the backend, and counts the
// failure in the cluster's ssl stats. An http2 upstream negotiates h2 and
// is health checked over the same TLS.
func TestUpstreamTLS(t *testing.T) {
	ca, other := newAuthority(t, "internal CA"), newAuthority(t, "another CA")
	srv := ca.issue(t, "api.internal")
	be := startBackendTLS(t, "api", "127.0.23.201", 0, &tls.Config{Certificates: []tls.Certificate{srv.pair}, NextProtos: []string{"http/1.1"}})
	h2 := startBackendTLS(t, "api-h2", "127.0.23.201", 0, &tls.Config{Certificates: []tls.Certificate{srv.pair}, NextProtos: []string{"h2", "http/1.1"}})
	vip := "127.0.23.10"
	port := freePort(t, vip, 23010)
	up := func(name, tlsBlock string) string {
		return fmt.Sprintf("  - name: %s\n    endpoints: [%q]\n    tls: %s\n    outlierDetection: {disabled: true}\n", name, be.endpoint(), tlsBlock)
	}
	g := startGateway(t, setup{hostIP: "127.0.23.100", files: map[string]string{
		"certs/ca.pem":    ca.pem,
		"certs/other.pem": other.pem,
		"gw.yaml":         fmt.Sprintf("kind: gateway/gateway/v1\nname: up\ngroup: edge\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP}\n", vip, port),
		"svc.yaml": "kind: gateway/service/v1\nname: uptls\ngroup: edge\nhosts: [uptls.test]\nlisteners: [up/web]\nupstreams:\n" +
			up("good", "{sni: api.internal, caFile: certs/ca.pem}") +
			up("wrongca", "{sni: api.internal, caFile: certs/other.pem}") +
			up("wrongsan", "{sni: api.internal, caFile: certs/ca.pem, subjectAltNames: [billing.internal]}") +
			up("wrongsni", "{sni: billing.internal, caFile: certs/ca.pem}") +
			fmt.Sprintf("  - name: h2\n    http2: true\n    endpoints: [%q]\n    tls: {sni: api.internal, caFile: certs/ca.pem}\n"+
				"    healthCheck: {http: {path: /healthz}, interval: 1s}\n", h2.endpoint()) +
			"routes:\n  - {prefix: /good, target: good}\n  - {prefix: /wrong-ca, target: wrongca}\n  - {prefix: /h2, target: h2}\n" +
			"  - {prefix: /wrong-san, target: wrongsan}\n  - {prefix: /wrong-sni, target: wrongsni}\n",
	}})
	c := newClient(vip, port, "uptls.test", nil)

	r := c.get(t, "/good")
	if r.status != http.StatusOK || r.backend() != "api" {
		t.Fatalf("right CA and name: %d %q, want 200 from the backend", r.status, r.body)
	}
	sni, alpn := be.handshakes()
	if !slices.Contains(sni, "api.internal") || !slices.Contains(alpn, "http/1.1") {
		t.Errorf("backend handshakes: SNI %q ALPN %q, want api.internal and http/1.1", sni, alpn)
	}
	// HTTP/2 over TLS (http2: true asks for ALPN h2), health checks
	// through the same TLS socket: the first request waits for the first
	// check.
	c.waitServed(t, "/h2", http.StatusOK)
	if r := c.get(t, "/h2"); r.backend() != "api-h2" || h2.header() == nil {
		t.Fatalf("/h2: %d %q", r.status, r.body)
	}
	if sni, alpn := h2.handshakes(); !slices.Contains(sni, "api.internal") || slices.Contains(alpn, "http/1.1") || !slices.Contains(alpn, "h2") {
		t.Errorf("HTTP/2 backend handshakes: SNI %q ALPN %q, want api.internal and h2 only", sni, alpn)
	}
	if h2.checks.Load() == 0 || h2.proto() != "HTTP/2.0" {
		t.Errorf("HTTP/2 backend: %d checks, last request %s; want checks over TLS and HTTP/2", h2.checks.Load(), h2.proto())
	}
	for _, tc := range []struct {
		name, path, cluster, stat string
	}{
		{"wrong CA", "/wrong-ca", "uptls/wrongca", "ssl.fail_verify_error"},
		{"subjectAltName not on the certificate", "/wrong-san", "uptls/wrongsan", "ssl.fail_verify_san"},
		{"SNI the certificate does not name", "/wrong-sni", "uptls/wrongsni", "ssl.fail_verify_san"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := be.requests.Load()
			r := c.get(t, tc.path)
			if r.status != http.StatusServiceUnavailable || r.backend() != "" {
				t.Fatalf("%s: %d %q from %q, want Envoy's 503", tc.path, r.status, r.body, r.backend())
			}
			if !strings.Contains(r.body, "upstream connect error") {
				t.Errorf("503 body %q, want Envoy's upstream connect error", r.body)
			}
			if n := be.requests.Load() - before; n != 0 {
				t.Errorf("the backend served %d requests through a cluster that must not trust it", n)
			}
			if v := g.stat(t, "cluster."+tc.cluster+"."+tc.stat); v < 1 {
				t.Errorf("cluster.%s.%s = %d, want >= 1", tc.cluster, tc.stat, v)
			}
		})
	}
}

// TestClientCertificates: a listener with clientCertificate (docs/l7.md,
// "TLS policy") refuses, at the handshake, a client without a certificate
// or with one its CA did not sign, and serves one with a valid
// certificate; with forwardClientCert the backend gets the verified
// identity in x-forwarded-client-cert and never what the client wrote.
// required: false lets a client without a certificate in, but still
// refuses an untrusted one.
func TestClientCertificates(t *testing.T) {
	serverCA, clientCA, rogueCA := newAuthority(t, "server CA"), newAuthority(t, "client CA"), newAuthority(t, "rogue CA")
	srv := serverCA.issue(t, "partners.test")
	good, rogue := clientCA.issue(t, "client.partners.test"), rogueCA.issue(t, "client.partners.test")
	be := startBackend(t, "partners", "127.0.23.202", 0)
	vipReq, vipOpt := "127.0.23.11", "127.0.23.12"
	portReq, portOpt := freePort(t, vipReq, 23020), freePort(t, vipOpt, 23030)
	listener := func(name, vip string, port int, client string) string {
		return fmt.Sprintf("  - name: %s\n    vip: %s\n    port: %d\n    protocol: HTTPS\n    clientCertificate: %s\n"+
			"    certificates: [{name: partners, sni: [partners.test], certFile: certs/srv.pem, keyFile: certs/srv.key}]\n", name, vip, port, client)
	}
	g := startGateway(t, setup{hostIP: "127.0.23.101", files: map[string]string{
		"certs/srv.pem": srv.certPEM, "certs/srv.key": srv.keyPEM, "certs/clients.pem": clientCA.pem,
		"gw.yaml": "kind: gateway/gateway/v1\nname: mtls\ngroup: edge\nlisteners:\n" +
			listener("required", vipReq, portReq, "{caFile: certs/clients.pem, forwardClientCert: true}") +
			listener("optional", vipOpt, portOpt, "{caFile: certs/clients.pem, required: false}"),
		"svc.yaml": fmt.Sprintf("kind: gateway/service/v1\nname: partners\ngroup: edge\nhosts: [partners.test]\n"+
			"listeners: [mtls/required, mtls/optional]\nupstreams:\n  - {name: main, endpoints: [%q]}\nroutes:\n  - {prefix: /, target: main}\n", be.endpoint()),
	}})
	cfg := func(cert *leaf) *tls.Config {
		c := &tls.Config{RootCAs: serverCA.pool(), ServerName: "partners.test"}
		if cert != nil {
			// Sent whatever CAs Envoy names as acceptable: Go's client
			// would otherwise send no certificate rather than an
			// untrusted one.
			c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert.pair, nil }
		}
		return c
	}
	// A new connection per request: each case is its own handshake.
	once := func(vip string, port int, cert *leaf) *client {
		c := newClient(vip, port, "partners.test", cfg(cert))
		c.c.Transport.(*http.Transport).DisableKeepAlives = true
		return c
	}
	for _, tc := range []struct {
		name    string
		vip     string
		port    int
		cert    *leaf
		refused string // the TLS alert Envoy refuses the handshake with
	}{
		{"required, valid certificate", vipReq, portReq, &good, ""},
		{"required, no certificate", vipReq, portReq, nil, "certificate required"},
		{"required, untrusted certificate", vipReq, portReq, &rogue, "unknown certificate authority"},
		{"optional, no certificate", vipOpt, portOpt, nil, ""},
		{"optional, valid certificate", vipOpt, portOpt, &good, ""},
		{"optional, untrusted certificate", vipOpt, portOpt, &rogue, "unknown certificate authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := be.requests.Load()
			if tc.refused != "" {
				if err := handshake(net.JoinHostPort(tc.vip, fmt.Sprint(tc.port)), cfg(tc.cert)); err == nil || !strings.Contains(err.Error(), "tls: "+tc.refused) {
					t.Fatalf("handshake: %v, want Envoy's alert %q", err, tc.refused)
				}
				if n := be.requests.Load() - before; n != 0 {
					t.Fatalf("the backend served %d requests of a refused client", n)
				}
				return
			}
			r := once(tc.vip, tc.port, tc.cert).do(http.MethodGet, "/who", "x-forwarded-client-cert", "By=spiffe://forged;Subject=\"CN=admin\"")
			if r.err != nil || r.status != http.StatusOK || r.backend() != "partners" {
				t.Fatalf("got %d %q (err %v), want 200 from the backend", r.status, r.body, r.err)
			}
			xfcc := be.header().Get("x-forwarded-client-cert")
			if strings.Contains(xfcc, "forged") || strings.Contains(xfcc, "CN=admin") {
				t.Fatalf("the client's own x-forwarded-client-cert reached the backend: %q", xfcc)
			}
			if tc.vip == vipReq && !strings.Contains(xfcc, `Subject="CN=client.partners.test"`) {
				t.Errorf("x-forwarded-client-cert = %q, want the verified subject CN=client.partners.test", xfcc)
			}
			if tc.vip == vipOpt && xfcc != "" {
				t.Errorf("x-forwarded-client-cert = %q on a listener without forwardClientCert, want none", xfcc)
			}
		})
	}
	// Envoy's own account of the refusals, per listener.
	for name, want := range map[string]int64{
		fmt.Sprintf("listener.%s_%d.ssl.fail_verify_no_cert", vipReq, portReq): 1,
		fmt.Sprintf("listener.%s_%d.ssl.fail_verify_error", vipReq, portReq):   1,
		fmt.Sprintf("listener.%s_%d.ssl.fail_verify_error", vipOpt, portOpt):   1,
		fmt.Sprintf("listener.%s_%d.ssl.no_certificate", vipOpt, portOpt):      1,
	} {
		if v := g.stat(t, name); v != want {
			t.Errorf("%s = %d, want %d", name, v, want)
		}
	}
}

// handshake completes a TLS handshake with addr and waits for Envoy's
// verdict on the client's certificate: with TLS 1.3 the client finishes
// first and learns of a refusal from the alert that follows.
func handshake(addr string, cfg *tls.Config) error {
	d := &net.Dialer{Timeout: 10 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	return err
}
