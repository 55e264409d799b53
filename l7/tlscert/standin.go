package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// StandIn is a throw-away certificate and key, made in memory, that an l7
// serving no gateway (the one beside the rate limit service) puts in the
// place of every certificate a gateway names, so it resolves the group
// exactly as the gateways' l7 does without reading any key. It is nobody's
// secret and is never served to a gateway.
type StandIn struct {
	Chain []byte
	Key   []byte
}

// NewStandIn makes a stand-in pair valid from an hour before now for ten
// years, so tlscert.Check accepts it whenever it is checked.
func NewStandIn(now time.Time) (StandIn, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return StandIn{}, fmt.Errorf("stand-in certificate key: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tlb stand-in (no key read)"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return StandIn{}, fmt.Errorf("stand-in certificate: %w", err)
	}
	kd, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return StandIn{}, fmt.Errorf("stand-in certificate key: %w", err)
	}
	return StandIn{
		Chain: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}),
	}, nil
}
