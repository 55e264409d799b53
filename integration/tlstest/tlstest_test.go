package tlstest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
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

// TestCAIssuesWhatClientsVerify: a certificate the CA issued verifies
// against the CA's pool for its own hosts only, and a self-signed one
// does not.
func TestCAIssuesWhatClientsVerify(t *testing.T) {
	ca := NewCA(t)
	chain, key := ca.Issue(t, "media.example.com")
	pair, err := tls.X509KeyPair(chain, key)
	if err != nil {
		t.Fatalf("not a certificate/key pair: %v", err)
	}
	c, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "media.example.com"}); err != nil {
		t.Errorf("issued certificate does not verify: %v", err)
	}
	if _, err := c.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "shop.example.com"}); err == nil {
		t.Error("issued certificate verifies for a host it does not name")
	}
	other, _ := SelfSigned(t, "media.example.com")
	block, _ := pem.Decode(other)
	sc, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "media.example.com"}); err == nil {
		t.Error("a self-signed certificate verifies against the CA")
	}
}
