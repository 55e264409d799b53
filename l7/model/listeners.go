package model

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Listener layout: every gateway listener is its own Envoy listener, bound
// on its VIP and port (netd binds the VIP on the gateway node; Envoy binds
// with freebind so the order of start does not matter). Nothing is merged
// and nothing is renumbered, so adding or removing one listener never
// changes another, and the L4 tier needs no port map.

// EnvoyListener is one listening socket of the gateways of a group: one
// declared VIP:port.
type EnvoyListener struct {
	Group    string
	Name     string // ListenerName(Protocol, VIP, Port), also its route configuration's name
	Protocol Protocol
	VIP      netip.Addr
	Port     uint32
	// Ref is the gateway listener it comes from.
	Ref ListenerRef
	// TLS: HTTPS, one filter chain per certificate, chosen by SNI.
	TLS []SNICertificate
	// Target is the cluster of a TCP listener.
	Target string
	// Forward are the weighted clusters of a TCP or UDP listener.
	Forward []WeightedCluster
	// Passthrough is a TLS listener's clusters by SNI name, sorted by
	// first server name (the entry without names last).
	Passthrough []SNITarget
	// RedirectHTTPS: an HTTP listener that redirects every request to https.
	RedirectHTTPS bool
	// TLSPolicy and ClientCertificate are the gateway listener's (HTTPS).
	TLSPolicy         *TLSPolicy
	ClientCertificate *ClientCertificate
	// Services are the names of the services served on it, sorted (HTTP and
	// HTTPS only).
	Services []string
	// RateLimitService is Options.RateLimitService: the global limits of
	// the routes served here go to it; nil for none.
	RateLimitService *RateLimitService
	// Tracing is its gateway's span export; a zero Collector exports none.
	Tracing Tracing
	// XFFTrustedHops is the gateway listener's (see Listener).
	XFFTrustedHops uint32
}

// ListenerName names the Envoy listener of a VIP:port, e.g.
// "https-203.0.113.10-443".
func ListenerName(p Protocol, vip netip.Addr, port uint32) string {
	return fmt.Sprintf("%s-%s-%d", strings.ToLower(string(p)), vip, port)
}

type vipPortOwner struct {
	gateway string
	origin  Origin
}

// resolveGateways accepts gateways in claim order: field errors, duplicate
// names, VIP:port already claimed, TCP targets missing from the group, a
// certificate it did not declare itself or whose name another accepted
// gateway serves with other content. It returns the accepted gateways
// and the certificates they serve, each sorted by name.
func resolveGateways(in []Gateway, owned map[GatewayID]map[string]Certificate, clusters map[string]string, problems *[]Problem) ([]Gateway, []Certificate) {
	served := servedCertificates{}
	vipPorts := map[netip.AddrPort]vipPortOwner{}
	names := map[string]Origin{}
	var accepted []Gateway
	for _, g := range claimOrder(in) {
		own := owned[g.ID()]
		ps := checkGateway(g, certificateNames(own))
		if o, dup := names[g.Name]; dup {
			ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: "name", Msg: fmt.Sprintf("gateway %q is already declared in %s", g.Name, o), Rejected: true})
		}
		mine := map[netip.AddrPort]bool{}
		for i, l := range g.Listeners {
			f := fmt.Sprintf("listeners[%d]", i)
			vp := netip.AddrPortFrom(l.VIP, uint16(l.Port))
			if mine[vp] {
				ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: f, Msg: "port conflict: " + vp.String() + " is used twice in this gateway", Rejected: true})
			}
			mine[vp] = true
			if o, taken := vipPorts[vp]; taken {
				ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: f, Msg: fmt.Sprintf("port conflict: %s was claimed first by gateway %q (%s)", vp, o.gateway, o.origin), Rejected: true})
			}
			if l.Protocol == TCP && l.Target != "" {
				if grp, ok := clusters[l.Target]; !ok || grp != g.Group {
					ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: f + ".target", Msg: fmt.Sprintf("no upstream %q (service/upstream) in group %q", l.Target, g.Group), Rejected: true})
				}
			}
			ps = append(ps, forwardClusters(g, l, f, clusters)...)
			for j, p := range l.Passthrough {
				for k, t := range p.Targets {
					if grp, ok := clusters[t.Cluster]; !ok || grp != g.Group {
						ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: fmt.Sprintf("%s.passthrough[%d].targets[%d].cluster", f, j, k), Msg: fmt.Sprintf("no upstream %q (service/upstream) in group %q", t.Cluster, g.Group), Rejected: true})
					}
				}
			}
			sni := map[string]bool{}
			for j, c := range l.TLS {
				for _, n := range c.ServerNames {
					if sni[n] {
						ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: fmt.Sprintf("%s.certificates[%d]", f, j), Msg: fmt.Sprintf("duplicate filter chain match: server name %q twice on %s", n, vp), Rejected: true})
					}
					sni[n] = true
				}
			}
		}
		if !hasRejection(ps) {
			ps = append(ps, served.conflicts(g, own)...)
		}
		*problems = append(*problems, ps...)
		if hasRejection(ps) {
			continue
		}
		served.add(g, own)
		names[g.Name] = g.Origin
		for vp := range mine {
			vipPorts[vp] = vipPortOwner{g.Name, g.Origin}
		}
		accepted = append(accepted, g)
	}
	slices.SortFunc(accepted, func(a, b Gateway) int { return cmp.Compare(a.Name, b.Name) })
	return accepted, served.sorted()
}

// attach builds the Envoy listeners of the accepted gateways and serves
// each accepted service on the listeners it names. A reference that cannot
// be served (no such listener, another group, a TCP or redirect listener,
// an HTTPS listener without a certificate for a host) is reported; the
// service stays served everywhere else.
func attach(gws []Gateway, svcs []Service, problems *[]Problem) []EnvoyListener {
	idx := map[ListenerRef]int{}
	defaults := map[string][]ListenerRef{} // group -> its default listeners
	var out []EnvoyListener
	for _, g := range gws {
		for _, l := range g.Listeners {
			ref := ListenerRef{Gateway: g.Name, Listener: l.Name}
			idx[ref] = len(out)
			if l.Default {
				defaults[g.Group] = append(defaults[g.Group], ref)
			}
			tlsCerts := slices.Clone(l.TLS)
			slices.SortFunc(tlsCerts, func(a, b SNICertificate) int { return cmp.Compare(firstName(a.ServerNames), firstName(b.ServerNames)) })
			out = append(out, EnvoyListener{
				Group: g.Group, Name: ListenerName(l.Protocol, l.VIP, l.Port), Protocol: l.Protocol,
				VIP: l.VIP, Port: l.Port, Ref: ref, TLS: tlsCerts, Target: l.Target, Forward: slices.Clone(l.Forward), RedirectHTTPS: l.RedirectHTTPS,
				Passthrough: sortedPassthrough(l.Passthrough),
				Tracing:     tracingOf(g), XFFTrustedHops: l.XFFTrustedHops,
				TLSPolicy: l.TLSPolicy, ClientCertificate: l.ClientCertificate,
			})
		}
	}
	for _, s := range svcs {
		refs, field := s.Listeners, func(i int) string { return fmt.Sprintf("listeners[%d]", i) }
		if len(refs) == 0 && s.Namespace == Operator && !s.GatewayAPI {
			// An operator's service that names no listener: its group's
			// default listeners (none: proxyless gRPC clients only).
			refs, field = defaults[s.Group], func(int) string { return "listeners" }
		}
		for i, ref := range refs {
			bad := func(format string, a ...any) {
				*problems = append(*problems, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: field(i),
					Msg: fmt.Sprintf(format, a...) + "; the service is not served there"})
			}
			j, ok := idx[ref]
			if !ok {
				bad("no listener %q among the accepted gateways", ref)
				continue
			}
			el := &out[j]
			switch {
			case el.Group != s.Group:
				bad("listener %q is in group %q, the service in group %q", ref, el.Group, s.Group)
			case el.Protocol == TCP || el.Protocol == UDP:
				bad("listener %q is %s; it forwards to its target and serves no routes", ref, el.Protocol)
			case el.Protocol == TLS:
				bad("listener %q is TLS; it forwards by server name and serves no routes", ref)
			case el.RedirectHTTPS:
				bad("listener %q redirects every request to HTTPS and serves no routes", ref)
			default:
				if el.Protocol == HTTPS {
					for _, h := range ServiceHosts(s) {
						if h != "*" && !covered(el.TLS, h) {
							bad("no certificate of listener %q covers host %q", ref, h)
						}
					}
				}
				el.Services = append(el.Services, s.Name)
			}
		}
	}
	for i := range out {
		slices.Sort(out[i].Services)
		out[i].Services = slices.Compact(out[i].Services)
	}
	slices.SortFunc(out, func(a, b EnvoyListener) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// covered reports whether a certificate's server names match host, as
// Envoy's SNI match does: exactly, or a wildcard "*.x" for one more label.
// The certificate without names (the default chain) covers every host.
func covered(certs []SNICertificate, host string) bool {
	for _, c := range certs {
		if len(c.ServerNames) == 0 {
			return true
		}
		for _, n := range c.ServerNames {
			if n == host {
				return true
			}
			if rest, ok := strings.CutPrefix(n, "*."); ok {
				if i := strings.IndexByte(host, '.'); i > 0 && host[i+1:] == rest && !strings.Contains(host[:i], "*") {
					return true
				}
			}
		}
	}
	return false
}

// sortedPassthrough copies a TLS listener's entries sorted by first
// server name, the entry without names (every other name) last.
func sortedPassthrough(in []SNITarget) []SNITarget {
	if in == nil {
		return nil
	}
	out := make([]SNITarget, len(in))
	for i, p := range in {
		p.ServerNames, p.Targets = slices.Clone(p.ServerNames), slices.Clone(p.Targets)
		out[i] = p
	}
	slices.SortFunc(out, func(a, b SNITarget) int { return cmp.Compare(firstName(a.ServerNames), firstName(b.ServerNames)) })
	return out
}

// firstName is the key entries matched by server name sort by: the first
// name, or, for the entry without names (every other name), one that
// sorts last.
func firstName(names []string) string {
	if len(names) == 0 {
		return "\xff"
	}
	return names[0]
}
