package model

import "fmt"

// The checks of a gateway and its listeners taken alone.

// checkGateway returns the field errors of one gateway taken alone.
func checkGateway(g Gateway, certs map[string]bool) []Problem {
	var ps []Problem
	bad := func(field, format string, a ...any) {
		ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: field, Msg: fmt.Sprintf(format, a...), Rejected: true})
	}
	if err := checkName(g.Name); err != nil {
		bad("name", "%v", err)
	}
	if err := checkName(g.Group); err != nil {
		bad("group", "%v", err)
	}
	if len(g.Listeners) == 0 {
		bad("listeners", "a gateway needs at least one listener")
	}
	checkTracing(g.Tracing, bad)
	names := map[string]bool{}
	for i, l := range g.Listeners {
		f := fmt.Sprintf("listeners[%d]", i)
		if err := checkName(l.Name); err != nil {
			bad(f+".name", "%v", err)
		}
		if names[l.Name] {
			bad(f+".name", "listener name %q used twice", l.Name)
		}
		names[l.Name] = true
		checkListener(l, f, certs, bad)
	}
	return ps
}

// checkListener adds the field errors of one listener at field f (its
// name aside); certs holds the certificate names it may refer to.
func checkListener(l Listener, f string, certs map[string]bool, bad func(field, format string, a ...any)) {
	if !l.VIP.IsValid() {
		bad(f+".vip", "want an IP address")
	}
	if l.Port == 0 || l.Port > 65535 {
		bad(f+".port", "want 1..65535, got %d", l.Port)
	}
	checkListenerProtocol(l, f, bad)
	checkListenerProtocolFields(l, f, bad)
	checkListenerTLS(l, f, bad)
	if l.XFFTrustedHops > 0 && l.Protocol != HTTP && l.Protocol != HTTPS {
		bad(f+".xffTrustedHops", "only HTTP and HTTPS listeners read X-Forwarded-For")
	}
	if l.XFFTrustedHops > MaxXFFTrustedHops {
		bad(f+".xffTrustedHops", "at most %d proxies in front of the gateway, got %d", MaxXFFTrustedHops, l.XFFTrustedHops)
	}
	checkListenerCertificates(l, f, certs, bad)
	checkTerminateCertificates(l, f, certs, bad)
}

// checkListenerProtocol adds the field errors of a listener's protocol
// and of what that protocol needs: certificates for HTTPS and none for
// HTTP or TCP, a target for TCP, passthrough entries for TLS.
func checkListenerProtocol(l Listener, f string, bad func(field, format string, a ...any)) {
	switch l.Protocol {
	case TLS:
		checkPassthrough(l, f, bad)
	case HTTP:
		if len(l.TLS) > 0 {
			bad(f+".certificates", "only HTTPS listeners carry certificates")
		}
	case HTTPS:
		if len(l.TLS) == 0 {
			bad(f+".certificates", "an HTTPS listener needs at least one certificate")
		}
	case TCP, UDP:
		checkForward(l, f, bad)
	default:
		bad(f+".protocol", "want HTTP, HTTPS, TCP, UDP or TLS, got %q", l.Protocol)
	}
}

// checkListenerProtocolFields adds the field errors of the settings only
// some protocols read: redirectHTTPS (HTTP), default (HTTP or HTTPS
// serving routes) and passthrough (TLS).
func checkListenerProtocolFields(l Listener, f string, bad func(field, format string, a ...any)) {
	if l.RedirectHTTPS && l.Protocol != HTTP {
		bad(f+".redirectHTTPS", "only an HTTP listener can redirect to HTTPS")
	}
	if l.Default && (l.RedirectHTTPS || (l.Protocol != HTTP && l.Protocol != HTTPS)) {
		bad(f+".default", "only an HTTP or HTTPS listener that serves routes (no redirectHTTPS) can serve the services that name no listener")
	}
	if l.Protocol != TCP && l.Protocol != UDP && len(l.Forward) > 0 {
		bad(f+".forward", "only TCP and UDP listeners forward to weighted clusters")
	}
	if l.Protocol != TLS && len(l.Passthrough) > 0 {
		bad(f+".passthrough", "only TLS listeners pass connections through by server name")
	}
}

// checkListenerCertificates adds the field errors of the certificates a
// listener serves: each one of certs, valid server names, and at most one
// served for every name (no names).
func checkListenerCertificates(l Listener, f string, certs map[string]bool, bad func(field, format string, a ...any)) {
	defaultChain := false
	for j, c := range l.TLS {
		if !certs[c.Certificate] {
			bad(fmt.Sprintf("%s.certificates[%d].certificate", f, j), "no certificate %q", c.Certificate)
		}
		if len(c.ServerNames) == 0 {
			// No names: the default chain, served for every other name.
			if defaultChain {
				bad(fmt.Sprintf("%s.certificates[%d].sni", f, j), "only one certificate may be served for every server name (no names)")
			}
			defaultChain = true
		}
		for k, n := range c.ServerNames {
			if err := checkHost(n); err != nil || n == "*" {
				bad(fmt.Sprintf("%s.certificates[%d].sni[%d]", f, j, k), "not a server name: %q", n)
			}
		}
	}
}
