package tlscert_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/tlscert"
)

var now = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

// newPair makes a throw-away self-signed certificate valid from notBefore
// to notAfter, and its key, both PEM.
func newPair(t *testing.T, notBefore, notAfter time.Time) (chain, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test.example.com"},
		DNSNames: []string{"test.example.com"}, NotBefore: notBefore, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})
}

func TestCheck(t *testing.T) {
	chain, key := newPair(t, now.Add(-time.Hour), now.Add(90*24*time.Hour))
	_, otherKey := newPair(t, now.Add(-time.Hour), now.Add(time.Hour))
	expired, expiredKey := newPair(t, now.Add(-48*time.Hour), now.Add(-time.Hour))
	early, earlyKey := newPair(t, now.Add(time.Hour), now.Add(48*time.Hour))
	for name, tc := range map[string]struct {
		chain, key []byte
		want       string // "" means accepted
	}{
		"valid":              {chain, key, ""},
		"key of another":     {chain, otherKey, "private key does not match"},
		"expired":            {expired, expiredKey, "expired at"},
		"not yet valid":      {early, earlyKey, "not valid before"},
		"no certificate":     {[]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), key, "certificate"},
		"garbage key":        {chain, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), "private key"},
		"key not PEM at all": {chain, []byte("nothing"), "private key"},
	} {
		t.Run(name, func(t *testing.T) {
			notAfter, err := tlscert.Check(tc.chain, tc.key, now)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !notAfter.Equal(now.Add(90 * 24 * time.Hour).Truncate(time.Second)) {
					t.Fatalf("notAfter %s", notAfter)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY-----") {
				t.Fatalf("error carries key material: %v", err)
			}
		})
	}
}
