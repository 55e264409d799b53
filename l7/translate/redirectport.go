package translate

import "github.com/tlbproject/tlb/l7/model"

// keepsListenerPort reports whether a Gateway API redirect must keep the
// port of the listener the request came on: it names another host but
// neither a scheme nor a port. The spec (HTTPRequestRedirectFilter.Port)
// derives the port from the scheme when one is set, else from the
// listener; Envoy's host_redirect alone drops the request's port.
func keepsListenerPort(rd *model.Redirect) bool {
	return rd != nil && rd.Hostname != "" && rd.Port == 0 && rd.Scheme == ""
}

// listenerRedirectPort returns the port redirects on el keep: el's port
// when it is not its protocol's well-known one (which a URL leaves out)
// and a route of svcs has a redirect that keeps it; else 0, so the
// routes of other listeners are shared as before.
func listenerRedirectPort(el model.EnvoyListener, svcs []model.Service) uint32 {
	if (el.Protocol == model.HTTP && el.Port == 80) || (el.Protocol == model.HTTPS && el.Port == 443) {
		return 0
	}
	for _, s := range svcs {
		for _, r := range s.Routes {
			if keepsListenerPort(r.Redirect) {
				return el.Port
			}
		}
	}
	return 0
}
