package jwks

import (
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// MinRSABits is the smallest RSA modulus accepted, in a PEM file or a
// JWKS.
const MinRSABits = 2048

// Check checks a JWKS document as Envoy's jwt_authn will use it: JSON
// with at least one key; each of a type Envoy verifies with, its
// parameters in base64url, and usable: an RSA modulus of at least 2048
// bits with a valid exponent, an EC point on P-256, P-384 or P-521, an
// Ed25519 key of 32 bytes, an HMAC secret of at least 32 bytes; an "alg"
// that fits the key; no private parameter of an asymmetric key. A key
// Envoy cannot use makes it refuse the whole listener; a weak one would
// be accepted by Envoy and is refused here.
func Check(doc []byte) error {
	var s struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(doc, &s); err != nil {
		return fmt.Errorf("not a JWKS (JSON with \"keys\"): %w", err)
	}
	if len(s.Keys) == 0 {
		return errors.New("the JWKS has no keys")
	}
	for i, k := range s.Keys {
		if err := checkKey(k); err != nil {
			return fmt.Errorf("keys[%d]: %w", i, err)
		}
	}
	return nil
}

// checkKey checks one key: its "alg" a string, no private parameter
// unless it is an HMAC secret, then what its type asks.
func checkKey(k jwk) error {
	alg, _ := k["alg"].(string)
	if v, ok := k["alg"]; ok {
		if _, isString := v.(string); !isString {
			return errors.New("alg: want a string")
		}
	}
	kty := k.kty()
	if _, ok := k["d"]; ok && kty != "oct" {
		return errors.New("holds a private key (\"d\"); publish the public key only")
	}
	switch kty {
	case "RSA":
		return checkRSAKey(k, alg)
	case "EC":
		return checkECKey(k, alg)
	case "OKP":
		return checkEd25519Key(k, alg)
	case "oct":
		return checkHMACKey(k, alg)
	default:
		return fmt.Errorf("kty %q is not RSA, EC, OKP or oct", kty)
	}
}

// jwk is one key of a JWKS, as decoded JSON.
type jwk map[string]any

// kty is the key's type, "" when it has none.
func (k jwk) kty() string {
	kty, _ := k["kty"].(string)
	return kty
}

// param decodes the key's base64url parameter name, which must be there.
func (k jwk) param(name string) ([]byte, error) {
	v, ok := k[name].(string)
	if !ok || v == "" {
		return nil, fmt.Errorf("%s key without %q", k.kty(), name)
	}
	b, err := b64url(v)
	if err != nil {
		return nil, fmt.Errorf("%s: not base64url: %w", name, err)
	}
	return b, nil
}

// checkRSAKey checks an RSA key: a modulus of at least MinRSABits bits,
// odd; an odd exponent from 3 to 2^32-1; an RS or PS alg.
func checkRSAKey(k jwk, alg string) error {
	n, err := k.param("n")
	if err != nil {
		return err
	}
	e, err := k.param("e")
	if err != nil {
		return err
	}
	if bits := new(big.Int).SetBytes(n).BitLen(); bits < MinRSABits {
		return fmt.Errorf("RSA modulus of %d bits; want at least %d", bits, MinRSABits)
	}
	if n[len(n)-1]&1 == 0 {
		return errors.New("RSA modulus is even")
	}
	ev := new(big.Int).SetBytes(e)
	if ev.BitLen() > 32 || ev.Int64() < 3 || ev.Bit(0) == 0 {
		return fmt.Errorf("RSA exponent %s; want an odd number from 3 to 2^32-1", ev)
	}
	if alg != "" && !strings.HasPrefix(alg, "RS") && !strings.HasPrefix(alg, "PS") {
		return fmt.Errorf("alg %q does not fit an RSA key", alg)
	}
	return nil
}

// ecCurve is what a JWK "crv" of type EC names: the curve, the size of a
// coordinate in bytes, and the one alg that signs with it.
type ecCurve struct {
	curve ecdh.Curve
	size  int
	alg   string
}

// ecCurves are the EC curves Envoy verifies with.
var ecCurves = map[string]ecCurve{
	"P-256": {ecdh.P256(), 32, "ES256"},
	"P-384": {ecdh.P384(), 48, "ES384"},
	"P-521": {ecdh.P521(), 66, "ES512"},
}

// checkECKey checks an EC key: a curve Envoy knows, coordinates of its
// size that make a point on it, and the curve's alg.
func checkECKey(k jwk, alg string) error {
	crv, _ := k["crv"].(string)
	c, ok := ecCurves[crv]
	if !ok {
		return fmt.Errorf("EC curve %q is not P-256, P-384 or P-521", crv)
	}
	x, err := k.param("x")
	if err != nil {
		return err
	}
	y, err := k.param("y")
	if err != nil {
		return err
	}
	if len(x) != c.size || len(y) != c.size {
		return fmt.Errorf("EC %s coordinates of %d and %d bytes; want %d", crv, len(x), len(y), c.size)
	}
	if _, err := c.curve.NewPublicKey(append(append([]byte{4}, x...), y...)); err != nil {
		return fmt.Errorf("EC point is not on %s", crv)
	}
	if alg != "" && alg != c.alg {
		return fmt.Errorf("alg %q does not fit an EC %s key (want %s)", alg, crv, c.alg)
	}
	return nil
}

// checkEd25519Key checks an OKP key: Ed25519, 32 bytes, alg EdDSA.
func checkEd25519Key(k jwk, alg string) error {
	if crv, _ := k["crv"].(string); crv != "Ed25519" {
		return fmt.Errorf("OKP curve %q is not Ed25519", crv)
	}
	x, err := k.param("x")
	if err != nil {
		return err
	}
	if len(x) != 32 {
		return fmt.Errorf("Ed25519 key of %d bytes; want 32", len(x))
	}
	if alg != "" && alg != "EdDSA" {
		return fmt.Errorf("alg %q does not fit an Ed25519 key", alg)
	}
	return nil
}

// checkHMACKey checks an oct key: a secret of at least MinHMACBytes
// bytes and an HMAC alg.
func checkHMACKey(k jwk, alg string) error {
	secret, err := k.param("k")
	if err != nil {
		return err
	}
	if len(secret) < MinHMACBytes {
		return fmt.Errorf("HMAC secret of %d bytes; use at least %d random bytes", len(secret), MinHMACBytes)
	}
	if alg != "" && !hmacAlgs[alg] {
		return fmt.Errorf("alg %q does not fit an HMAC secret", alg)
	}
	return nil
}

// b64url decodes base64url, with or without padding; the standard
// alphabet's '+' and '/' are refused.
func b64url(s string) ([]byte, error) {
	if strings.ContainsAny(s, "+/") {
		return nil, errors.New("standard base64 alphabet ('+' or '/') instead of base64url")
	}
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}
