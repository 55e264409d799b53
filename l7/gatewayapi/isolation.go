package gatewayapi

import "slices"

// isolate returns the hostnames a route serves on listener l of g, from
// hosts (its hostnames intersected with l's; nil for any): those that no
// more specific listener of g on l's port takes. The spec's listener
// isolation (GatewayHTTPListenerIsolation): a request matches the most
// specific listener of its host, and only that listener's routes serve
// it, so a route of the listener without hostname that names
// *.example.com does not serve bar.example.com when a listener for
// *.example.com exists. none is true when every host went: the route
// stays attached (attachment depends on allowedRoutes and parentRefs
// alone) but serves nothing there.
func isolate(g *gateway, l *listener, hosts []string) (kept []string, none bool) {
	if hosts == nil {
		return nil, false
	}
	kept = slices.DeleteFunc(slices.Clone(hosts), func(h string) bool {
		return slices.ContainsFunc(g.servedListeners(), func(o *listener) bool {
			return o != l && o.spec.Port == l.spec.Port && o.protocol == l.protocol && moreSpecific(o.hostname(), l.hostname()) && takesHost(o.hostname(), h)
		})
	})
	return kept, len(kept) == 0
}

// moreSpecific reports whether listener hostname a is narrower than b
// ("" is any host).
func moreSpecific(a, b string) bool {
	return a != "" && a != b && (b == "" || wildcardMatches(b, a))
}

// takesHost reports whether listener hostname lh takes every request for
// the route hostname h: h is lh, or a name or wildcard inside lh.
func takesHost(lh, h string) bool {
	return lh == h || wildcardMatches(lh, h)
}
