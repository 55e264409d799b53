package gatewayapi

import (
	"fmt"
	"slices"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/kubeobj"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// listenerCertificates resolves the certificateRefs of an HTTPS listener
// into model certificates chosen by SNI. The first serves the listener's
// hostname (or, with none, the names in the certificate, or every name
// when it has none); each further one serves the names of its own that
// the listener's hostname matches and no earlier one serves (with no
// hostname: its names not yet served), so certificates for different
// names share one listener. A further certificate left with no name of its
// own (the same names with another key type) is checked, not served, and
// the listener's Accepted message says so. The first bad reference sets
// ResolvedRefs False; the listener is then not programmed.
func (b *builder) listenerCertificates(gw *gatewayv1.Gateway, l *listener, f string) {
	gen, now := gw.Generation, b.in.Now
	bad := func(reason gatewayv1.ListenerConditionReason, msg string) {
		l.resolved = condition(gatewayv1.ListenerConditionResolvedRefs, false, reason, msg, gen, now)
		l.certs, l.certSANs = nil, nil
	}
	if l.spec.TLS == nil || len(l.spec.TLS.CertificateRefs) == 0 {
		bad(gatewayv1.ListenerReasonInvalidCertificateRef, f+".tls.certificateRefs: a listener that terminates TLS needs a certificate")
		return
	}
	served := map[string]bool{} // server names given a certificate; "" the default chain
	var unserved []string
	for j, ref := range l.spec.TLS.CertificateRefs {
		rf := fmt.Sprintf("%s.tls.certificateRefs[%d]", f, j)
		if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != kindSecret) {
			bad(gatewayv1.ListenerReasonInvalidCertificateRef, rf+": only core Secrets are supported")
			return
		}
		ns := gw.Namespace
		if ref.Namespace != nil && *ref.Namespace != "" {
			ns = string(*ref.Namespace)
		}
		if ns != gw.Namespace && !b.granted(gw.Namespace, gatewayv1.GroupName, referrerKind(gw), ns, "", kindSecret, string(ref.Name)) {
			bad(gatewayv1.ListenerReasonRefNotPermitted, fmt.Sprintf("%s: no ReferenceGrant in namespace %s lets Gateways of %s refer to Secret %s", rf, ns, gw.Namespace, ref.Name))
			return
		}
		name := modelName("cert", ns, string(ref.Name))
		c, msg := kubeobj.TLSCertificate(b.secrets[nn(ns, string(ref.Name))], name, ns, string(ref.Name), now)
		if msg != "" {
			bad(gatewayv1.ListenerReasonInvalidCertificateRef, rf+": "+msg)
			return
		}
		names, sans, err := serverNames(l, c, j == 0)
		if err != nil {
			bad(gatewayv1.ListenerReasonInvalidCertificateRef, rf+": "+err.Error())
			return
		}
		if names == nil && !served[""] {
			served[""] = true // the default chain: every other name
		} else if names = unclaimed(names, served); len(names) == 0 {
			unserved = append(unserved, fmt.Sprintf("certificateRefs[%d]", j))
			continue
		}
		l.certSANs = append(l.certSANs, sans...)
		l.certs = append(l.certs, model.SNICertificate{ServerNames: names, Certificate: name})
		if !b.certNames[name] {
			b.certNames[name] = true
			b.out.Config.Certificates = append(b.out.Config.Certificates, c)
		}
	}
	if served[""] {
		l.certSANs = nil // a certificate naming no names serves every name
	}
	if len(unserved) > 0 {
		// The spec (ListenerTLSConfig.CertificateRefs): more than one
		// reference is implementation-specific. A certificate for names
		// an earlier one serves is checked, not served; the listener
		// says so rather than drop it silently.
		l.accepted.Message = fmt.Sprintf("accepted; %s.tls.%s are not served: they name no server name an earlier certificate does not (one certificate per name, chosen by SNI)", f, strings.Join(unserved, ", "))
	}
}

// serverNames are the SNI names a listener serves certificate c for, and
// c's DNS names (nil when it names none). The first certificate
// (first) serves the listener's hostname; a further one the names of
// its own the hostname matches. A listener without hostname serves each
// certificate for its DNS names; one naming none is served for every
// other server name: nil, the model's default chain (the first such).
func serverNames(l *listener, c model.Certificate, first bool) (names, sans []string, err error) {
	leaf, err := tlscert.Leaf(c.Chain)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range leaf.DNSNames {
		sans = append(sans, strings.ToLower(n))
	}
	h := l.hostname()
	switch {
	case h != "" && first:
		return []string{h}, sans, nil
	case h != "":
		names = []string{}
		for _, n := range sans {
			if n == h || isWildcard(h) && !isWildcard(n) && wildcardMatches(h, n) {
				names = append(names, n)
			}
		}
		return names, sans, nil
	case len(sans) == 0:
		return nil, nil, nil
	}
	return slices.Clone(sans), sans, nil
}

// gatewayCertificates returns, from pool, the certificates g's listeners
// serve, as declared by g: a Secret several Gateways refer to is one
// certificate per Gateway (model.Resolve serves it once), so each
// Gateway's listeners get only what that Gateway itself resolved.
func gatewayCertificates(g model.Gateway, pool []model.Certificate) []model.Certificate {
	var out []model.Certificate
	seen := map[string]bool{}
	for _, l := range g.Listeners {
		for _, ref := range modelListenerCertificates(l) {
			if seen[ref] {
				continue
			}
			for _, c := range pool {
				if c.Name == ref {
					c.Gateway = g.ID()
					out = append(out, c)
					seen[c.Name] = true
					break
				}
			}
		}
	}
	return out
}

// uncovered returns the hosts of hosts, the hostnames a route serves on
// l, that l's certificate does not cover: a client checks the certificate
// against the name it asked for. nil (any name), a listener that does not
// terminate TLS (HTTPS, or TLS of mode Terminate), or a certificate
// naming no DNS names (served for every name): none.
func (l *listener) uncovered(hosts []string) []string {
	if (l.protocol != model.HTTPS && !l.terminate) || l.certSANs == nil {
		return nil
	}
	var out []string
	for _, h := range hosts {
		if !covers(l.certSANs, h) {
			out = append(out, h)
		}
	}
	return out
}

// covers reports whether a certificate for the DNS names sans serves
// host h. A wildcard name covers exactly one label (RFC 6125 6.4.3: the
// spec's "*.example.com" listener matches "a.b.example.com", a
// "*.example.com" certificate does not); a wildcard h is covered when
// some name of the certificate falls under it.
func covers(sans []string, h string) bool {
	for _, s := range sans {
		s = strings.ToLower(s)
		switch {
		case s == h:
			return true
		case isWildcard(h):
			if wildcardMatches(h, s) {
				return true
			}
		case isWildcard(s):
			label, rest, ok := strings.Cut(h, ".")
			if ok && label != "" && "*."+rest == s {
				return true
			}
		}
	}
	return false
}

// serveNames adds names to the server names of the first certificate of
// an HTTPS listener without hostname, which serves its certificates for
// the names they hold (names one of them serves, or a default chain,
// stay as they are): a route's hostname outside them would otherwise have no TLS
// chain at all (nothing served while the route is Accepted). A listener
// with a hostname serves it for every name that hostname matches.
func (l *listener) serveNames(names []string) {
	if len(names) == 0 || l.hostname() != "" || len(l.certs) == 0 || l.certs[0].ServerNames == nil {
		return
	}
	for _, n := range names {
		if !slices.ContainsFunc(l.certs, func(c model.SNICertificate) bool { return c.ServerNames == nil || slices.Contains(c.ServerNames, n) }) {
			l.certs[0].ServerNames = append(l.certs[0].ServerNames, n)
		}
	}
}
