package model

import "fmt"

// TLS listeners that terminate: an SNITarget with a Certificate (Gateway
// API TLSRoute on a listener of mode Terminate) is served that
// certificate, and its connections are forwarded as plain TCP. Entries
// that terminate and entries that pass through may share a listener
// (mode Mixed: one port, chosen by SNI).

// certificateRef is one certificate a listener serves, by name, with the
// field that names it.
type certificateRef struct {
	name, field string
}

// listenerCertificates returns the certificates listener l (at field f)
// serves: those of its HTTPS filter chains, then those of its TLS
// entries that terminate.
func listenerCertificates(l Listener, f string) []certificateRef {
	var out []certificateRef
	for j, c := range l.TLS {
		out = append(out, certificateRef{c.Certificate, fmt.Sprintf("%s.certificates[%d]", f, j)})
	}
	for j, p := range l.Passthrough {
		if p.Certificate != "" {
			out = append(out, certificateRef{p.Certificate, fmt.Sprintf("%s.passthrough[%d].certificate", f, j)})
		}
	}
	return out
}

// ListenerCertificateNames returns the names of the certificates el
// serves: its HTTPS chains' and its terminating TLS entries'.
func ListenerCertificateNames(el EnvoyListener) []string {
	var out []string
	for _, c := range el.TLS {
		out = append(out, c.Certificate)
	}
	for _, p := range el.Passthrough {
		if p.Certificate != "" {
			out = append(out, p.Certificate)
		}
	}
	return out
}

// checkTerminateCertificates adds the field errors of the TLS entries of
// l that terminate: each certificate one of certs, the gateway's own.
func checkTerminateCertificates(l Listener, f string, certs map[string]bool, bad func(field, format string, a ...any)) {
	for j, p := range l.Passthrough {
		if p.Certificate != "" && !certs[p.Certificate] {
			bad(fmt.Sprintf("%s.passthrough[%d].certificate", f, j), "no certificate %q", p.Certificate)
		}
	}
}
