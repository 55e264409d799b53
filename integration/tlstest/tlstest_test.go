package tlstest

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

// TestSelfSignedIsAPairForTheHosts: the certificate and key load as one
// TLS pair and the certificate names every host.
func TestSelfSignedIsAPairForTheHosts(t *testing.T) {
	chain, key := SelfSigned(t, "shop.example.com", "*.shop.example.com")
	pair, err := tls.X509KeyPair(chain, key)
	if err != nil {
		t.Fatalf("not a certificate/key pair: %v", err)
	}
	c, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"shop.example.com", "a.shop.example.com"} {
		if err := c.VerifyHostname(h); err != nil {
			t.Errorf("certificate does not cover %s: %v", h, err)
		}
	}
	if c.Subject.CommonName != "shop.example.com" {
		t.Errorf("common name %q", c.Subject.CommonName)
	}
}
