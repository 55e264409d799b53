package translate

import (
	"reflect"
	"slices"
	"strings"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/tlbproject/tlb/l7/model"
)

// Misdirected requests (Gateway API, GatewayHTTPSListenerDetectMisdirectedRequests):
// the HTTPS listeners of a Gateway that share a port are the SNI filter
// chains of one Envoy listener. A client may reuse a connection opened
// for one name to ask for another (HTTP/2 connection coalescing); a Host
// that the listener its SNI chose does not serve, but another listener of
// the port does, is answered 421 Misdirected Request, so that the client
// opens a connection for it. Each such chain reads a route table of its
// own: the listener's virtual hosts whose host the chain's listener
// serves (the most specific hostname of the port that matches it, as in
// the spec's listener precedence), and a 421 for the hostnames of the
// other listeners, and for every other host when the chain's listener has
// a hostname of its own.

// misdirectedStatus is HTTP 421 Misdirected Request (RFC 9110, 15.5.20).
const misdirectedStatus = 421

// detectsMisdirected reports whether the chains of el serve more than one
// Gateway API listener, each with a route table of its own.
func detectsMisdirected(el model.EnvoyListener) bool {
	if el.Protocol != model.HTTPS || len(el.TLS) < 2 {
		return false
	}
	for _, c := range el.TLS {
		if c.Listener == "" || c.Listener != el.TLS[0].Listener {
			return c.Listener != "" && el.TLS[0].Listener != ""
		}
	}
	return false
}

// chainRouteConfig is the name of the route table the chain c of el reads:
// the listener's, or its Gateway API listener's own (see above).
func chainRouteConfig(el model.EnvoyListener, c model.SNICertificate) string {
	if !detectsMisdirected(el) {
		return el.Name
	}
	return el.Name + "/" + c.Listener
}

// misdirectedRoutes returns the route table of each Gateway API listener
// of el's chains, made from rc, el's own; none when el does not need
// them.
func misdirectedRoutes(el model.EnvoyListener, rc *route.RouteConfiguration) []*route.RouteConfiguration {
	if !detectsMisdirected(el) {
		return nil
	}
	var hostnames []string
	for _, c := range el.TLS {
		if c.Hostname != "" && !slices.Contains(hostnames, c.Hostname) {
			hostnames = append(hostnames, c.Hostname)
		}
	}
	slices.Sort(hostnames)
	var out []*route.RouteConfiguration
	done := map[string]bool{}
	for _, c := range el.TLS {
		if done[c.Listener] {
			continue
		}
		done[c.Listener] = true
		out = append(out, chainRoutes(chainRouteConfig(el, c), c.Hostname, hostnames, rc))
	}
	return out
}

// chainRoutes is the route table named name of the listener with
// hostname own ("" for any) among the port's hostnames: rc's settings,
// the virtual hosts of rc that listener serves, and 421 for the others'.
func chainRoutes(name, own string, hostnames []string, rc *route.RouteConfiguration) *route.RouteConfiguration {
	t := &route.RouteConfiguration{}
	src, dst := rc.ProtoReflect(), t.ProtoReflect()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() != "virtual_hosts" {
			dst.Set(fd, v) // shared, as the Cache shares messages: nothing changes them
		}
		return true
	})
	t.Name = name
	kept := map[string]bool{}
	for _, vh := range rc.GetVirtualHosts() {
		if len(vh.GetDomains()) > 0 && servedBy(vh.GetDomains()[0], hostnames) == own {
			t.VirtualHosts = append(t.VirtualHosts, vh)
			kept[vh.GetDomains()[0]] = true
		}
	}
	answer := func(host string, status uint32) {
		if !kept[host] {
			kept[host] = true
			t.VirtualHosts = append(t.VirtualHosts, statusVirtualHost(host, status))
		}
	}
	for _, h := range hostnames {
		if h != own {
			answer(h, misdirectedStatus)
		}
	}
	if own != "" {
		answer(own, 404) // its own hosts without a route: not found, not misdirected
		answer("*", misdirectedStatus)
	}
	return t
}

// servedBy returns the hostname, among hostnames, of the listener that
// serves host: the same name, else the longest wildcard that matches it
// (a Gateway API wildcard matches one label or more); "" for the listener
// without hostname.
func servedBy(host string, hostnames []string) string {
	if slices.Contains(hostnames, host) {
		return host
	}
	best := ""
	for _, h := range hostnames {
		suffix, ok := strings.CutPrefix(h, "*")
		if ok && strings.HasSuffix(host, suffix) && len(host) > len(suffix) && len(h) > len(best) {
			best = h
		}
	}
	return best
}

// statusVirtualHost answers every request for host with status alone.
func statusVirtualHost(host string, status uint32) *route.VirtualHost {
	return &route.VirtualHost{
		Name: "status-" + host, Domains: []string{host},
		Routes: []*route.Route{{
			Match:  &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
			Action: &route.Route_DirectResponse{DirectResponse: &route.DirectResponseAction{Status: status}},
		}},
	}
}

// misdirected is misdirectedRoutes of el and rc, its route table in the
// Cache, the last ones when rc and el's chains are the same.
func (c *Cache) misdirected(group string, el model.EnvoyListener, rc *route.RouteConfiguration) []*route.RouteConfiguration {
	e := c.routes[serviceKey{group, el.Name}]
	if e == nil || e.rc != rc {
		return misdirectedRoutes(el, rc)
	}
	if e.misdirected == nil || !reflect.DeepEqual(e.chains, el.TLS) {
		e.chains = slices.Clone(el.TLS)
		e.misdirected = misdirectedRoutes(el, rc)
	}
	return e.misdirected
}
