package edge

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"testing"
	"time"
)

// signer signs JSON Web Tokens with one key of one algorithm.
type signer struct {
	alg string
	key any // []byte (HMAC), *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey
}

// newSigner makes a fresh key for alg: HS256, RS256, ES256 or EdDSA.
func newSigner(t *testing.T, alg string) signer {
	t.Helper()
	var key any
	var err error
	switch alg {
	case "HS256":
		b := make([]byte, 32)
		_, err = rand.Read(b)
		key = []byte(hex.EncodeToString(b)) // 64 bytes of text: the secret file as people write it
	case "RS256":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "EdDSA":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("unknown algorithm %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return signer{alg: alg, key: key}
}

// keyFile is what the DSL reads: the HMAC secret, or the PEM public key.
func (s signer) keyFile(t *testing.T) string {
	t.Helper()
	var pub any
	switch k := s.key.(type) {
	case []byte:
		return string(k)
	case *rsa.PrivateKey:
		pub = &k.PublicKey
	case *ecdsa.PrivateKey:
		pub = &k.PublicKey
	case ed25519.PrivateKey:
		pub = k.Public()
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// claims are a token's payload.
type claims map[string]any

// validClaims: issued now by iss for aud, valid for an hour, with extra.
func validClaims(iss, aud, sub string, extra claims) claims {
	c := claims{"iss": iss, "aud": aud, "sub": sub, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// token signs c.
func (s signer) token(t *testing.T, c claims) string {
	t.Helper()
	enc := base64.RawURLEncoding
	h, err := json.Marshal(map[string]string{"alg": s.alg, "typ": "JWT"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := s.key.(type) {
	case []byte:
		m := hmac.New(sha256.New, k)
		m.Write([]byte(input))
		sig = m.Sum(nil)
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, digest[:])
	case *ecdsa.PrivateKey:
		var r, sv []byte
		rr, ss, e := ecdsa.Sign(rand.Reader, k, digest[:])
		err = e
		if e == nil {
			r, sv = make([]byte, 32), make([]byte, 32)
			rr.FillBytes(r)
			ss.FillBytes(sv)
			sig = append(r, sv...)
		}
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, []byte(input))
	}
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + enc.EncodeToString(sig)
}
