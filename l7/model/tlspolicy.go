package model

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// TLS policy of the gateways: what an HTTPS listener accepts from clients
// (versions, TLS 1.2 cipher suites, client certificates) and how a cluster
// speaks TLS to its endpoints. l7/translate turns these into Envoy's
// DownstreamTlsContext and UpstreamTlsContext.

// The TLS versions a listener may set as its minimum. The maximum is
// always TLS 1.3.
const (
	TLS12 = "1.2"
	TLS13 = "1.3"
)

// DefaultTLSMinVersion is the minimum TLS version of an HTTPS listener
// that sets none.
const DefaultTLSMinVersion = TLS12

// DefaultCipherSuites returns the TLS 1.2 cipher suites of an HTTPS
// listener that sets none, in preference order: ECDHE key exchange (forward
// secrecy) with AEAD ciphers only. They are also the only names a listener
// may list. TLS 1.3 suites are fixed by BoringSSL and not configurable.
func DefaultCipherSuites() []string {
	return []string{
		"ECDHE-ECDSA-AES128-GCM-SHA256",
		"ECDHE-RSA-AES128-GCM-SHA256",
		"ECDHE-ECDSA-CHACHA20-POLY1305",
		"ECDHE-RSA-CHACHA20-POLY1305",
		"ECDHE-ECDSA-AES256-GCM-SHA384",
		"ECDHE-RSA-AES256-GCM-SHA384",
	}
}

// ECDHCurves returns the key exchange groups every HTTPS listener offers.
func ECDHCurves() []string { return []string{"X25519", "P-256"} }

// refusedCipherSuites are the other TLS 1.2 names BoringSSL (and so Envoy)
// accepts, refused by policy: CBC mode (padding-oracle history, MAC then
// encrypt) or RSA key exchange (no forward secrecy), and 3DES (64-bit
// blocks, Sweet32).
var refusedCipherSuites = map[string]string{
	"ECDHE-ECDSA-AES128-SHA":      "CBC mode",
	"ECDHE-RSA-AES128-SHA":        "CBC mode",
	"ECDHE-ECDSA-AES256-SHA":      "CBC mode",
	"ECDHE-RSA-AES256-SHA":        "CBC mode",
	"ECDHE-PSK-AES128-CBC-SHA":    "CBC mode and a pre-shared key",
	"ECDHE-PSK-AES256-CBC-SHA":    "CBC mode and a pre-shared key",
	"ECDHE-PSK-CHACHA20-POLY1305": "a pre-shared key",
	"AES128-GCM-SHA256":           "RSA key exchange, no forward secrecy",
	"AES256-GCM-SHA384":           "RSA key exchange, no forward secrecy",
	"AES128-SHA":                  "RSA key exchange and CBC mode",
	"AES256-SHA":                  "RSA key exchange and CBC mode",
	"DES-CBC3-SHA":                "3DES (64-bit blocks) and RSA key exchange",
	"PSK-AES128-CBC-SHA":          "CBC mode and a pre-shared key",
	"PSK-AES256-CBC-SHA":          "CBC mode and a pre-shared key",
}

// TLSPolicy is what an HTTPS listener accepts: nil or zero fields take the
// defaults (DefaultTLSMinVersion, DefaultCipherSuites).
type TLSPolicy struct {
	// MinVersion is TLS12 or TLS13; empty for the default.
	MinVersion string
	// CipherSuites are TLS 1.2 suites in preference order; empty for the
	// default. Only with a 1.2 minimum.
	CipherSuites []string
}

// ClientCertificate makes an HTTPS listener ask clients for a certificate
// signed by one of CA's certificates (mutual TLS).
type ClientCertificate struct {
	// CA is a PEM bundle of the trusted CA certificates (public data).
	CA []byte
	// Required refuses the handshake of a client without a certificate;
	// when false a client may present none, but one it presents must
	// verify.
	Required bool
	// AcceptUntrusted lets a client whose certificate does not verify in
	// too (the Gateway API's AllowInsecureFallback: the backend decides);
	// only with Required false.
	AcceptUntrusted bool
	// ForwardDetails sets x-forwarded-client-cert upstream to the verified
	// certificate's details; otherwise the header is removed.
	ForwardDetails bool
}

// UpstreamTLS makes a cluster speak TLS to its endpoints, verifying their
// certificate against CA and a subject alternative name.
type UpstreamTLS struct {
	// SNI is the server name sent, and the name verified by default.
	SNI string
	// CA is a PEM bundle of the trusted CA certificates (public data).
	CA []byte
	// SubjectAltNames are DNS names one of which the endpoint's
	// certificate must carry (or one of URISubjectAltNames); both empty
	// means SNI.
	SubjectAltNames []string
	// URISubjectAltNames are URI subject alternative names (SPIFFE IDs,
	// as a BackendTLSPolicy may name them), checked like SubjectAltNames.
	URISubjectAltNames []string
}

// VerifiedNames returns the DNS names an upstream's certificate is checked
// against: SubjectAltNames, or the SNI when no name of either kind is
// given.
func (u *UpstreamTLS) VerifiedNames() []string {
	if len(u.SubjectAltNames) > 0 || len(u.URISubjectAltNames) > 0 {
		return u.SubjectAltNames
	}
	return []string{u.SNI}
}

// CheckCABundle checks that pem holds one or more X.509 certificates and
// nothing else (a private key pasted by mistake would be published).
func CheckCABundle(data []byte) error {
	if len(strings.TrimSpace(string(data))) == 0 {
		return fmt.Errorf("empty; want PEM CA certificates")
	}
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			if n > 0 && len(strings.TrimSpace(string(rest))) > 0 {
				return fmt.Errorf("not PEM after %d certificate(s)", n)
			}
			break
		}
		if b.Type != "CERTIFICATE" {
			return fmt.Errorf("holds a %q block; a CA bundle holds certificates only", b.Type)
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Errorf("certificate %d: %w", n+1, err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no PEM certificate found")
	}
	return nil
}

// checkListenerTLS adds the field errors of a listener's TLS policy and
// client certificate settings, at field f (listeners[i]).
func checkListenerTLS(l Listener, f string, bad func(field, format string, a ...any)) {
	if l.Protocol != HTTPS {
		if l.TLSPolicy != nil {
			bad(f+".tls", "only HTTPS listeners terminate TLS")
		}
		if l.ClientCertificate != nil {
			bad(f+".clientCertificate", "only HTTPS listeners terminate TLS")
		}
		return
	}
	checkTLSPolicy(l.TLSPolicy, f+".tls", bad)
	if c := l.ClientCertificate; c != nil {
		if err := CheckCABundle(c.CA); err != nil {
			bad(f+".clientCertificate.ca", "%v", err)
		}
		if c.AcceptUntrusted && c.Required {
			bad(f+".clientCertificate.acceptUntrusted", "a required certificate must verify")
		}
	}
}

// CheckTLSPolicy returns the errors of a listener's TLS policy taken
// alone (fields "tls.minVersion", "tls.cipherSuites[i]"), joined, or nil.
func CheckTLSPolicy(p *TLSPolicy) error {
	var ps []Problem
	checkTLSPolicy(p, "tls", func(field, format string, a ...any) {
		ps = append(ps, Problem{Kind: "listener", Field: field, Msg: fmt.Sprintf(format, a...), Rejected: true})
	})
	return joinProblems(ps)
}

// checkTLSPolicy adds the field errors of a TLS policy at field f.
func checkTLSPolicy(p *TLSPolicy, f string, bad func(field, format string, a ...any)) {
	if p != nil {
		switch p.MinVersion {
		case "", TLS12, TLS13:
		case "1.0", "1.1":
			bad(f+".minVersion", "TLS %s is refused (deprecated by RFC 8996); want %q or %q", p.MinVersion, TLS12, TLS13)
		default:
			bad(f+".minVersion", "want %q or %q, got %q", TLS12, TLS13, p.MinVersion)
		}
		if p.MinVersion == TLS13 && len(p.CipherSuites) > 0 {
			bad(f+".cipherSuites", "apply to TLS 1.2 only; TLS 1.3 suites are not configurable")
		}
		allowed := DefaultCipherSuites()
		seen := map[string]bool{}
		for j, c := range p.CipherSuites {
			cf := fmt.Sprintf("%s.cipherSuites[%d]", f, j)
			switch why, refused := refusedCipherSuites[c]; {
			case slices.Contains(allowed, c):
			case refused:
				bad(cf, "%q is refused (%s); want ECDHE with AEAD: %s", c, why, strings.Join(allowed, ", "))
			case strings.HasPrefix(c, "TLS_"):
				bad(cf, "%q is a TLS 1.3 suite, which is not configurable; list TLS 1.2 suites: %s", c, strings.Join(allowed, ", "))
			default:
				bad(cf, "unknown cipher suite %q; want one of %s", c, strings.Join(allowed, ", "))
			}
			if seen[c] {
				bad(cf, "%q listed twice", c)
			}
			seen[c] = true
		}
	}
}

// checkUpstreamTLS adds the field errors of an upstream's TLS settings at
// field f (upstreams[i].tls).
func checkUpstreamTLS(u *UpstreamTLS, f string, bad func(field, format string, a ...any)) {
	if u == nil {
		return
	}
	if err := checkServerName(u.SNI); err != nil {
		bad(f+".sni", "%v", err)
	}
	if err := CheckCABundle(u.CA); err != nil {
		bad(f+".ca", "%v", err)
	}
	for j, n := range u.SubjectAltNames {
		if err := checkServerName(n); err != nil {
			bad(fmt.Sprintf("%s.subjectAltNames[%d]", f, j), "%v", err)
		}
	}
	for j, n := range u.URISubjectAltNames {
		if p, err := url.Parse(n); err != nil || p.Scheme == "" {
			bad(fmt.Sprintf("%s.uriSubjectAltNames[%d]", f, j), "%q is not an absolute URI", n)
		}
	}
}

// checkServerName accepts a host name without wildcard.
func checkServerName(n string) error {
	if n == "" {
		return fmt.Errorf("required")
	}
	if strings.Contains(n, "*") || checkHost(n) != nil {
		return fmt.Errorf("%q is not a server name (lower case, no wildcard)", n)
	}
	return nil
}
