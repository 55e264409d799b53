package tlscert

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// Check verifies that chain is PEM certificates whose first (the leaf) is
// valid at now and that key is the private key of that leaf. It returns
// the leaf's end of validity. The error says which of the two is wrong,
// never what the key holds.
func Check(chain, key []byte, now time.Time) (notAfter time.Time, err error) {
	pair, err := tls.X509KeyPair(chain, key)
	if err != nil {
		// Tell a bad certificate from a key that does not fit it.
		if _, lerr := Leaf(chain); lerr != nil {
			return time.Time{}, lerr
		}
		return time.Time{}, fmt.Errorf("private key does not match the certificate, or is not a PEM private key: %w", err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return time.Time{}, fmt.Errorf("parse certificate: %w", err)
		}
	}
	if now.Before(leaf.NotBefore) {
		return time.Time{}, fmt.Errorf("certificate is not valid before %s (now %s)", leaf.NotBefore.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if now.After(leaf.NotAfter) {
		return time.Time{}, fmt.Errorf("certificate expired at %s (now %s)", leaf.NotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return leaf.NotAfter, nil
}

// Leaf parses the first certificate of a PEM chain.
func Leaf(chain []byte) (*x509.Certificate, error) {
	for rest := chain; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("no PEM certificate")
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate: %w", err)
		}
		return c, nil
	}
}
