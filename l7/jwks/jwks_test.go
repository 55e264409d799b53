package jwks_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/tlbproject/tlb/l7/jwks"
)

func pemOf(t *testing.T, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// verifies signs a token with priv and checks that a JOSE library,
// reading the JWKS we built, verifies it: the key parameters are right.
func verifies(t *testing.T, doc string, priv crypto.Signer, alg jose.SignatureAlgorithm) {
	t.Helper()
	var set jose.JSONWebKeySet
	if err := json.Unmarshal([]byte(doc), &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("JWKS %s does not parse as one JWK: %v", doc, err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: priv}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := signer.Sign([]byte(`{"sub":"u-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	compact, _ := obj.CompactSerialize()
	parsed, err := jose.ParseSigned(compact, []jose.SignatureAlgorithm{alg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parsed.Verify(set.Keys[0].Key); err != nil {
		t.Fatalf("%s token does not verify with the JWKS we built: %v", alg, err)
	}
}

func TestFromPEMKeysVerifyTokens(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ek384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	ek521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	_, edk, _ := ed25519.GenerateKey(rand.Reader)
	for name, tc := range map[string]struct {
		priv crypto.Signer
		alg  jose.SignatureAlgorithm
	}{
		"RSA": {rk, jose.RS256}, "P-256": {ek256, jose.ES256}, "P-384": {ek384, jose.ES384},
		"P-521": {ek521, jose.ES512}, "Ed25519": {edk, jose.EdDSA},
	} {
		t.Run(name, func(t *testing.T) {
			doc, err := jwks.FromPEM(pemOf(t, tc.priv.Public()))
			if err != nil {
				t.Fatal(err)
			}
			if err := jwks.Check([]byte(doc)); err != nil {
				t.Fatal(err)
			}
			verifies(t, doc, tc.priv, tc.alg)
		})
	}
}

func TestFromHMAC(t *testing.T) {
	secret := []byte(strings.Repeat("k", 64))
	for _, alg := range []string{"HS256", "HS384", "HS512"} {
		doc, err := jwks.FromHMAC(secret, alg)
		if err != nil {
			t.Fatal(err)
		}
		var set jose.JSONWebKeySet
		if err := json.Unmarshal([]byte(doc), &set); err != nil {
			t.Fatal(err)
		}
		signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: secret}, nil)
		obj, _ := signer.Sign([]byte(`{}`))
		if _, err := obj.Verify(set.Keys[0].Key); err != nil || set.Keys[0].Algorithm != alg {
			t.Errorf("%s: %v (alg %q)", alg, err, set.Keys[0].Algorithm)
		}
	}
	if _, err := jwks.FromHMAC([]byte("short"), "HS256"); err == nil || strings.Contains(err.Error(), "short") {
		t.Errorf("short secret: %v (must be refused without echoing it)", err)
	}
	if _, err := jwks.FromHMAC(secret, "none"); err == nil {
		t.Error("alg none accepted")
	}
}

func TestRefused(t *testing.T) {
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalECPrivateKey(priv)
	for name, in := range map[string][]byte{
		"no PEM":      []byte("hello"),
		"private key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
		"RSA 1024":    pemOf(t, small.Public()),
	} {
		if _, err := jwks.FromPEM(in); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for name, doc := range map[string]string{
		"not JSON":    "nope",
		"no keys":     `{"keys":[]}`,
		"unknown kty": `{"keys":[{"kty":"XYZ"}]}`,
		"RSA no n":    `{"keys":[{"kty":"RSA","e":"AQAB"}]}`,
		"private EC":  `{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b","d":"c"}]}`,
	} {
		if err := jwks.Check([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzCheck: Check never panics on any input.
func FuzzCheck(f *testing.F) {
	f.Add(`{"keys":[{"kty":"oct","k":"a"}]}`)
	f.Add(`{"keys":[{"kty":"RSA","n":1}]}`)
	f.Fuzz(func(t *testing.T, doc string) { _ = jwks.Check([]byte(doc)) })
}
