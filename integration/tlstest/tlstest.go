// Package tlstest makes throw-away TLS certificates, in memory, for tests
// that put them in Kubernetes Secrets or DSL files. It owns nothing and
// writes nothing to disk.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"time"
)

// T is what SelfSigned needs from its caller; testing.TB satisfies it.
type T interface {
	Helper()
	Fatal(args ...any)
}

// SelfSigned returns a PEM certificate for hosts (the first is also the
// common name), valid from an hour ago for two hours, and its PEM PKCS#8
// P-256 key.
func SelfSigned(t T, hosts ...string) (chain, key []byte) {
	t.Helper()
	if len(hosts) == 0 {
		t.Fatal("tlstest.SelfSigned: at least one host name is required")
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: hosts[0]},
		DNSNames:     hosts,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}
