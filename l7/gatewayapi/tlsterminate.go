package gatewayapi

import (
	"github.com/tlbproject/tlb/l7/model"
)

// TLS listeners of mode Terminate (features TLSRouteModeTerminate and
// TLSRouteModeMixed): the listener's certificateRefs are resolved as an
// HTTPS listener's, and each TLSRoute's server names become SNI entries
// of the model's TLS listener that carry the certificate serving them:
// Envoy terminates TLS with it and forwards the plain TCP stream to the
// route's backends. Passthrough and Terminate listeners may share a port
// (Mixed): their entries share the model listener, chosen by SNI.

// sniTargets are the model entries of a route attached to l for the
// server names hosts (none: every name) forwarding to cs. A passthrough
// listener makes one; a terminating one one per certificate the names
// are served with.
func (l *listener) sniTargets(hosts []string, cs []model.WeightedCluster) []model.SNITarget {
	if len(hosts) == 0 {
		hosts = []string{"*"}
	}
	if !l.terminate {
		return []model.SNITarget{{ServerNames: hosts, Targets: cs}}
	}
	var out []model.SNITarget
	at := map[string]int{} // certificate -> index in out
	for _, h := range hosts {
		c := l.certificateFor(h)
		i, ok := at[c]
		if !ok {
			i = len(out)
			at[c] = i
			out = append(out, model.SNITarget{Targets: cs, Certificate: c})
		}
		out[i].ServerNames = append(out[i].ServerNames, h)
	}
	return out
}

// certificateFor is the certificate a terminating listener serves for
// server name h ("*": every name): the first whose names cover it, else
// the one for every other name, else the first.
func (l *listener) certificateFor(h string) string {
	def := ""
	for _, c := range l.certs {
		if c.ServerNames == nil {
			if def == "" {
				def = c.Certificate
			}
			continue
		}
		if h != "*" && covers(c.ServerNames, h) {
			return c.Certificate
		}
	}
	if def != "" {
		return def
	}
	return l.certs[0].Certificate
}

// httpsCerts are the certificates of l's HTTPS filter chains: a
// terminating TLS listener serves its own through its SNI entries.
func (l *listener) httpsCerts() []model.SNICertificate {
	if l.protocol != model.HTTPS {
		return nil
	}
	return l.certs
}

// modelListenerCertificates are the names of the certificates a model
// listener serves: its HTTPS chains' and its terminating entries'.
func modelListenerCertificates(l model.Listener) []string {
	var out []string
	for _, c := range l.TLS {
		out = append(out, c.Certificate)
	}
	for _, p := range l.Passthrough {
		if p.Certificate != "" {
			out = append(out, p.Certificate)
		}
	}
	return out
}
