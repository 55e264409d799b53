package jwks_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/jwks"
)

// TestCheckRefusesKeysEnvoyCannotUse: a JWKS key Envoy cannot verify with
// (it would refuse the listener) or a weak one is refused, naming the
// key; every key FromPEM and FromHMAC make passes (issue 22 item 6: a
// 1-byte RSA modulus, P-192 and bad base64 passed).
func TestCheckRefusesKeysEnvoyCannotUse(t *testing.T) {
	b := func(x []byte) string { return base64.RawURLEncoding.EncodeToString(x) }
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	raw, _ := ec.PublicKey.Bytes()
	x, y := b(raw[1:33]), b(raw[33:])
	offCurve := append([]byte(nil), raw[33:]...)
	offCurve[31] ^= 1
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	n := b(rk.N.Bytes())
	for name, tc := range map[string]struct{ doc, want string }{
		"1-byte RSA modulus":  {`{"keys":[{"kty":"RSA","n":"AQ","e":"AQAB"}]}`, "RSA modulus of 1 bits"},
		"RSA 1024":            {fmt.Sprintf(`{"keys":[{"kty":"RSA","n":%q,"e":"AQAB"}]}`, b(rk.N.Bytes()[:128])), "RSA modulus of 1024 bits"},
		"RSA exponent 1":      {fmt.Sprintf(`{"keys":[{"kty":"RSA","n":%q,"e":"AQ"}]}`, n), "RSA exponent 1"},
		"RSA bad base64":      {`{"keys":[{"kty":"RSA","n":"!!!","e":"AQAB"}]}`, "n: not base64url"},
		"RSA std alphabet":    {fmt.Sprintf(`{"keys":[{"kty":"RSA","n":%q,"e":"AQAB"}]}`, base64.StdEncoding.EncodeToString(rk.N.Bytes())+"+/"), "n: not base64url"},
		"RSA alg ES256":       {fmt.Sprintf(`{"keys":[{"kty":"RSA","n":%q,"e":"AQAB","alg":"ES256"}]}`, n), `alg "ES256" does not fit`},
		"P-192":               {fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-192","x":%q,"y":%q}]}`, x, y), `EC curve "P-192"`},
		"EC off the curve":    {fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-256","x":%q,"y":%q}]}`, x, b(offCurve)), "not on P-256"},
		"EC short coordinate": {fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-256","x":%q,"y":%q}]}`, x[:10], y), "coordinates of"},
		"EC alg ES384":        {fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-256","x":%q,"y":%q,"alg":"ES384"}]}`, x, y), "want ES256"},
		"Ed448":               {`{"keys":[{"kty":"OKP","crv":"Ed448","x":"AAAA"}]}`, `OKP curve "Ed448"`},
		"Ed25519 short":       {`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA"}]}`, "Ed25519 key of 3 bytes"},
		"short HMAC":          {`{"keys":[{"kty":"oct","k":"c2hvcnQ"}]}`, "HMAC secret of 5 bytes"},
		"alg not a string":    {fmt.Sprintf(`{"keys":[{"kty":"RSA","n":%q,"e":"AQAB","alg":1}]}`, n), "alg: want a string"},
		"second key bad":      {fmt.Sprintf(`{"keys":[{"kty":"RSA","n":%q,"e":"AQAB"},{"kty":"RSA","n":"AQ","e":"AQAB"}]}`, n), "keys[1]:"},
	} {
		t.Run(name, func(t *testing.T) {
			err := jwks.Check([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check: %v, want an error saying %q", err, tc.want)
			}
		})
	}

	ed, _, _ := ed25519.GenerateKey(rand.Reader)
	for name, pub := range map[string]any{"RSA 2048": rk.Public(), "P-256": &ec.PublicKey, "Ed25519": ed} {
		doc, err := jwks.FromPEM(pemOf(t, pub))
		if err != nil {
			t.Fatal(err)
		}
		if err := jwks.Check([]byte(doc)); err != nil {
			t.Errorf("%s from FromPEM: %v", name, err)
		}
	}
	for _, curve := range []elliptic.Curve{elliptic.P384(), elliptic.P521()} {
		k, _ := ecdsa.GenerateKey(curve, rand.Reader)
		doc, err := jwks.FromPEM(pemOf(t, &k.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		if err := jwks.Check([]byte(doc)); err != nil {
			t.Errorf("%s: %v", curve.Params().Name, err)
		}
	}
	doc, err := jwks.FromHMAC([]byte(strings.Repeat("s", 32)), "HS512")
	if err != nil {
		t.Fatal(err)
	}
	if err := jwks.Check([]byte(doc)); err != nil {
		t.Errorf("FromHMAC: %v", err)
	}
	padded := fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-256","x":%q,"y":%q,"alg":"ES256"}]}`, x+"=", y)
	if err := jwks.Check([]byte(padded)); err != nil {
		t.Errorf("padded base64url: %v", err)
	}
}
