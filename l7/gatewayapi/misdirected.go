package gatewayapi

import (
	"slices"

	"github.com/tlbproject/tlb/l7/model"
)

// The HTTPS listeners of a Gateway that share a port share one Envoy
// listener, one filter chain each (chosen by SNI). A certificate of the
// listener without hostname often names the hostnames of the others too
// (a wildcard certificate): the listener with that hostname keeps the
// name, so a client asking for it by SNI reaches that listener, as the
// spec's listener precedence asks (the most specific hostname wins). Each
// chain carries its listener (model.SNICertificate.Listener, Hostname),
// from which translate answers 421 to a request misdirected to another
// listener of the port.

// listenerIDs names each listener g serves, as its chains carry it: a
// listener of g by its name, one of a ListenerSet by the set's namespace
// and name and its own (a set's listener may have the name of one of
// g's).
func listenerIDs(g *gateway) map[*listener]string {
	out := map[*listener]string{}
	for _, l := range g.listeners {
		out[l] = string(l.spec.Name)
	}
	for _, s := range g.sets {
		for _, l := range s.listeners {
			out[l] = s.obj.Namespace + "/" + s.obj.Name + "/" + string(l.spec.Name)
		}
	}
	return out
}

// listenerHostnames returns, per model listener of g, the hostnames of
// the programmable HTTPS listeners g serves on it.
func listenerHostnames(g *gateway) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, l := range g.servedListeners() {
		if !l.programmable() || l.protocol != model.HTTPS || l.hostname() == "" {
			continue
		}
		for ai := range g.addrs {
			n := l.modelListener(ai)
			if out[n] == nil {
				out[n] = map[string]bool{}
			}
			out[n][l.hostname()] = true
		}
	}
	return out
}

// withoutHostnames returns the server names not in hostnames, in a new
// slice.
func withoutHostnames(names []string, hostnames map[string]bool) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return hostnames[n] })
}
