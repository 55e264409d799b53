package edge

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/integration/envoyproc"
)

// TestTLSTermination: an HTTPS listener with two certificates chosen by
// SNI (one a wildcard), verified by the client against the test CA; a
// name no certificate covers and a client that trusts another CA both
// fail the handshake; the HTTP listener of the same VIP answers every
// request with a redirect to https.
func TestTLSTermination(t *testing.T) {
	const vip, node = "127.0.21.10", "127.0.21.110"
	ca := newCA(t)
	shopCrt, shopKey := ca.issue(t, "shop.example.com")
	blogCrt, blogKey := ca.issue(t, "blog.example.com", "*.blog.example.com")
	shop, blog := startBackend(t, "shop"), startBackend(t, "blog")
	startGateway(t, node, map[string]string{
		"certs/shop.crt": shopCrt, "certs/shop.key": shopKey,
		"certs/blog.crt": blogCrt, "certs/blog.key": blogKey,
		"gw.yaml": fmt.Sprintf(`kind: gateway/gateway/v1
name: public
group: edge
listeners:
  - {name: web, vip: %[1]s, port: 21080, protocol: HTTP, redirectHTTPS: true}
  - name: secure
    vip: %[1]s
    port: 21443
    protocol: HTTPS
    certificates:
      - {name: shop, sni: [shop.example.com], certFile: certs/shop.crt, keyFile: certs/shop.key}
      - {name: blog, sni: [blog.example.com, "*.blog.example.com"], certFile: certs/blog.crt, keyFile: certs/blog.key}
`, vip),
		"shop.yaml": service("shop", "shop.example.com", "public/secure", shop),
		"blog.yaml": service("blog", `blog.example.com, "*.blog.example.com"`, "public/secure", blog),
	})
	secure, web := vip+":21443", vip+":21080"

	for _, tc := range []struct {
		name, url, cn, backend string
	}{
		{"first certificate", "https://shop.example.com/cart?id=7", "shop.example.com", "shop"},
		{"second certificate", "https://blog.example.com/post/1", "blog.example.com", "blog"},
		{"wildcard name", "https://www.blog.example.com/", "blog.example.com", "blog"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(t, tlsClient(secure, ca), request{URL: tc.url})
			r.wantStatus(t, 200)
			if r.PeerCN != tc.cn {
				t.Errorf("certificate %q, want %q", r.PeerCN, tc.cn)
			}
			host := strings.SplitN(strings.TrimPrefix(tc.url, "https://"), "/", 2)[0]
			path := tc.url[len("https://")+len(host):]
			if r.Saw == nil || r.Saw.Backend != tc.backend || r.Saw.Host != host || r.Saw.Path != path {
				t.Errorf("backend saw %+v, want %s to see host %s path %s", r.Saw, tc.backend, host, path)
			}
			if got, _ := r.sawHeader("x-forwarded-proto"); got != "https" {
				t.Errorf("x-forwarded-proto %q upstream, want https", got)
			}
		})
	}

	t.Run("no certificate for the name", func(t *testing.T) {
		_, err := trySend(tlsClient(secure, ca), request{URL: "https://other.example.com/"})
		if err == nil {
			t.Fatal("handshake for a name no certificate covers succeeded")
		}
	})
	t.Run("client trusting another CA", func(t *testing.T) {
		other := newCA(t)
		_, err := trySend(tlsClient(secure, other), request{URL: "https://shop.example.com/"})
		var unknown x509.UnknownAuthorityError
		if !errorAs(err, &unknown) {
			t.Fatalf("error %v, want the certificate refused as signed by an unknown authority", err)
		}
	})
	t.Run("TLS 1.1 refused", func(t *testing.T) {
		c := envoyproc.ClientTo(secure, &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS11, MaxVersion: tls.VersionTLS11}, false) //nolint:gosec // the old version is the point
		if _, err := trySend(c, request{URL: "https://shop.example.com/"}); err == nil {
			t.Fatal("a TLS 1.1 handshake succeeded")
		}
	})

	for _, tc := range []struct{ name, url, location string }{
		{"redirect keeps host, path and query", "http://shop.example.com/cart?id=7", "https://shop.example.com/cart?id=7"},
		{"redirect for any host", "http://blog.example.com/", "https://blog.example.com/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(t, plainClient(web), request{URL: tc.url})
			r.wantStatus(t, 301)
			if got := r.Header.Get("location"); got != tc.location {
				t.Errorf("location %q, want %q", got, tc.location)
			}
			if r.Saw != nil {
				t.Errorf("a backend answered the redirect: %+v", r.Saw)
			}
		})
	}
}

// service is a DSL service with one upstream (the backend) and one
// catch-all route, served for hosts on listener.
func service(name, hosts, listener string, b *backend) string {
	return fmt.Sprintf(`kind: gateway/service/v1
name: %s
group: edge
hosts: [%s]
listeners: [%s]
upstreams: [{name: main, endpoints: ["%s"]}]
routes: [{prefix: /, target: main}]
`, name, hosts, listener, b.addr())
}
