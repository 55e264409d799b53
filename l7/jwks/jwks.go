package jwks

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
)

// The HMAC algorithms a secret may be used with.
var hmacAlgs = map[string]bool{"HS256": true, "HS384": true, "HS512": true}

// MinHMACBytes is the shortest HMAC secret accepted (RFC 7518 3.2: a key
// of at least the hash's size; 32 bytes for HS256).
const MinHMACBytes = 32

type key struct {
	Kty string `json:"kty"`
	Alg string `json:"alg,omitempty"`
	Kid string `json:"kid,omitempty"`
	K   string `json:"k,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
}

type set struct {
	Keys []key `json:"keys"`
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// CheckHMAC checks an HMAC secret and its algorithm.
func CheckHMAC(secret []byte, alg string) error {
	if !hmacAlgs[alg] {
		return fmt.Errorf("algorithm %q is not HS256, HS384 or HS512", alg)
	}
	if len(secret) < MinHMACBytes {
		return fmt.Errorf("the secret has %d bytes; use at least %d random bytes", len(secret), MinHMACBytes)
	}
	return nil
}

// FromHMAC returns the JWKS of one HMAC secret for alg.
func FromHMAC(secret []byte, alg string) (string, error) {
	if err := CheckHMAC(secret, alg); err != nil {
		return "", err
	}
	b, err := json.Marshal(set{Keys: []key{{Kty: "oct", Alg: alg, K: b64(secret)}}})
	return string(b), err
}

// FromPEM returns the JWKS of the public keys in pemBytes (PKIX "PUBLIC
// KEY" blocks, or certificates whose key is used): RSA (at least 2048
// bits), ECDSA P-256/384/521 or Ed25519.
func FromPEM(pemBytes []byte) (string, error) {
	var keys []key
	rest := pemBytes
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		var pub any
		var err error
		switch blk.Type {
		case "PUBLIC KEY":
			pub, err = x509.ParsePKIXPublicKey(blk.Bytes)
		case "CERTIFICATE":
			var c *x509.Certificate
			if c, err = x509.ParseCertificate(blk.Bytes); err == nil {
				pub = c.PublicKey
			}
		default:
			return "", fmt.Errorf("PEM block %q: want PUBLIC KEY or CERTIFICATE (never a private key)", blk.Type)
		}
		if err != nil {
			return "", fmt.Errorf("PEM block %q: %w", blk.Type, err)
		}
		k, err := fromPublic(pub)
		if err != nil {
			return "", err
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return "", errors.New("no PEM public key found")
	}
	b, err := json.Marshal(set{Keys: keys})
	return string(b), err
}

func fromPublic(pub any) (key, error) {
	switch p := pub.(type) {
	case *rsa.PublicKey:
		if p.N.BitLen() < MinRSABits {
			return key{}, fmt.Errorf("RSA key of %d bits; want at least %d", p.N.BitLen(), MinRSABits)
		}
		return key{Kty: "RSA", N: b64(p.N.Bytes()), E: b64(big.NewInt(int64(p.E)).Bytes())}, nil
	case *ecdsa.PublicKey:
		size := (p.Curve.Params().BitSize + 7) / 8
		crv := map[int]string{256: "P-256", 384: "P-384", 521: "P-521"}[p.Curve.Params().BitSize]
		if crv == "" {
			return key{}, fmt.Errorf("ECDSA curve %s is not P-256, P-384 or P-521", p.Curve.Params().Name)
		}
		raw, err := p.Bytes() // 0x04 || X || Y
		if err != nil {
			return key{}, err
		}
		return key{Kty: "EC", Crv: crv, X: b64(raw[1 : 1+size]), Y: b64(raw[1+size:])}, nil
	case ed25519.PublicKey:
		return key{Kty: "OKP", Crv: "Ed25519", X: b64(p)}, nil
	}
	return key{}, fmt.Errorf("public key of type %T: want RSA, ECDSA or Ed25519", pub)
}
