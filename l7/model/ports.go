package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Port mapping. Envoy runs without privileges, so it cannot bind external
// ports below 1024; and one listener port cannot carry two protocols.
//
//   - An external port used by one Envoy listener of the group binds the same
//     port when it is 1024 or above, or port+8000 when it is privileged
//     (80 -> 8080, 443 -> 8443, 22 -> 8022).
//   - An external port shared by several Envoy listeners of the group (say
//     8888/HTTPS and 8888/TCP on different VIPs) gives each its own port from
//     10000+port up (18888, 18889), as eBay did.
//   - A wanted port already taken moves to the next free one, in a fixed
//     order, so the mapping is deterministic. Ports in ReservedPorts are
//     never used.
//
// The Service (or netd rule) in front of the gateways maps VIP:external to
// the listener port; EnvoyListener.Port says which.

// ReservedPorts are never given to listeners: Envoy's admin port.
var reservedPorts = map[uint32]bool{9901: true}

// ListenerPortFor returns the port preferred for an external port, before
// collisions are resolved.
func ListenerPortFor(external uint32, shared bool) uint32 {
	switch {
	case shared:
		return 10000 + external
	case external < 1024:
		return external + 8000
	default:
		return external
	}
}

var protoOrder = map[Protocol]int{HTTP: 0, HTTPS: 1, TCP: 2}

func resolveGateways(in []Gateway, certs map[string]bool, clusters map[string]string, incumbent Incumbent, problems *[]Problem) ([]Gateway, []EnvoyListener) {
	type owner struct {
		gateway string
		origin  Origin
	}
	vipPorts := map[string]owner{}
	snis := map[string]owner{}
	names := map[string]Origin{}
	var accepted []Gateway
	for _, g := range incumbentsFirst(in, "gateway", func(g Gateway) string { return g.Name }, incumbent) {
		ps := checkGateway(g, certs)
		if o, dup := names[g.Name]; dup {
			ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: "name", Msg: fmt.Sprintf("gateway %q is already declared in %s", g.Name, o), Rejected: true})
		}
		mineVP := map[string]bool{}
		mineSNI := map[string]bool{}
		for i, l := range g.Listeners {
			f := fmt.Sprintf("listeners[%d]", i)
			vp := fmt.Sprintf("%s:%d", l.VIP, l.Port)
			if mineVP[vp] {
				ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: f, Msg: "port conflict: " + vp + " is used twice in this gateway", Rejected: true})
			}
			mineVP[vp] = true
			if o, taken := vipPorts[vp]; taken {
				ps = append(ps,
					Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: f, Msg: fmt.Sprintf("port conflict: %s is already served by gateway %q (%s)", vp, o.gateway, o.origin), Rejected: true},
					Problem{Kind: "gateway", Name: o.gateway, Origin: o.origin, Field: "listeners", Msg: fmt.Sprintf("port conflict: gateway %q (%s) also wants %s and was rejected", g.Name, g.Origin, vp)})
			}
			if l.Protocol == TCP && l.Target != "" {
				if grp, ok := clusters[l.Target]; !ok || grp != g.Group {
					ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: f + ".target", Msg: fmt.Sprintf("no upstream %q (service/upstream) in group %q", l.Target, g.Group), Rejected: true})
				}
			}
			for j, c := range l.TLS {
				for _, n := range c.ServerNames {
					k := fmt.Sprintf("%s|%d|%s", g.Group, l.Port, n)
					if mineSNI[k] {
						ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: fmt.Sprintf("%s.certificates[%d]", f, j), Msg: fmt.Sprintf("duplicate filter chain match: server name %q twice on port %d", n, l.Port), Rejected: true})
					}
					mineSNI[k] = true
					if o, taken := snis[k]; taken {
						ps = append(ps,
							Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: fmt.Sprintf("%s.certificates[%d]", f, j), Msg: fmt.Sprintf("duplicate filter chain match: server name %q on port %d is already served by gateway %q (%s)", n, l.Port, o.gateway, o.origin), Rejected: true},
							Problem{Kind: "gateway", Name: o.gateway, Origin: o.origin, Field: "listeners", Msg: fmt.Sprintf("duplicate filter chain match: gateway %q (%s) also wants server name %q on port %d and was rejected", g.Name, g.Origin, n, l.Port)})
					}
				}
			}
		}
		if hasRejection(ps) {
			*problems = append(*problems, ps...)
			continue
		}
		*problems = append(*problems, ps...)
		names[g.Name] = g.Origin
		for mvp := range mineVP {
			vipPorts[mvp] = owner{g.Name, g.Origin}
		}
		for k := range mineSNI {
			snis[k] = owner{g.Name, g.Origin}
		}
		accepted = append(accepted, g)
	}
	slices.SortFunc(accepted, func(a, b Gateway) int { return cmp.Compare(a.Name, b.Name) })
	return accepted, mapListeners(accepted)
}

func hasRejection(ps []Problem) bool {
	for _, p := range ps {
		if p.Rejected {
			return true
		}
	}
	return false
}

// mapListeners merges the accepted gateways' listeners into Envoy
// listeners per group and gives each an unprivileged port.
func mapListeners(gws []Gateway) []EnvoyListener {
	units := map[string]*EnvoyListener{}
	for _, g := range gws {
		for _, l := range g.Listeners {
			var name string
			switch l.Protocol {
			case TCP:
				name = fmt.Sprintf("tcp-%d-%s.%s", l.Port, l.Name, g.Name)
			default:
				name = fmt.Sprintf("%s-%d", strings.ToLower(string(l.Protocol)), l.Port)
			}
			key := g.Group + "|" + name
			u, ok := units[key]
			if !ok {
				u = &EnvoyListener{Group: g.Group, Name: name, Protocol: l.Protocol, External: l.Port, Target: l.Target}
				units[key] = u
			}
			u.VIPs = append(u.VIPs, l.VIP.String())
			u.TLS = append(u.TLS, l.TLS...)
		}
	}
	all := make([]EnvoyListener, 0, len(units))
	for _, u := range units {
		slices.Sort(u.VIPs)
		u.VIPs = slices.Compact(u.VIPs)
		slices.SortFunc(u.TLS, func(a, b SNICertificate) int { return cmp.Compare(a.ServerNames[0], b.ServerNames[0]) })
		all = append(all, *u)
	}
	slices.SortFunc(all, func(a, b EnvoyListener) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.External, b.External),
			cmp.Compare(protoOrder[a.Protocol], protoOrder[b.Protocol]), cmp.Compare(a.Name, b.Name))
	})
	// Per group: listeners alone on a non-privileged port keep it; the
	// rest probe upwards from their preferred port.
	used := map[string]map[uint32]bool{}
	perPort := map[string]int{}
	for _, l := range all {
		perPort[fmt.Sprintf("%s|%d", l.Group, l.External)]++
	}
	for i := range all {
		l := &all[i]
		if used[l.Group] == nil {
			used[l.Group] = map[uint32]bool{}
		}
		if perPort[fmt.Sprintf("%s|%d", l.Group, l.External)] == 1 && l.External >= 1024 && !reservedPorts[l.External] {
			l.Port = l.External
			used[l.Group][l.Port] = true
		}
	}
	for i := range all {
		l := &all[i]
		if l.Port != 0 {
			continue
		}
		p := ListenerPortFor(l.External, perPort[fmt.Sprintf("%s|%d", l.Group, l.External)] > 1)
		for tries := 0; tries < 65536; tries++ {
			if p > 65535 {
				p = 1024
			}
			if !used[l.Group][p] && !reservedPorts[p] {
				break
			}
			p++
		}
		l.Port = p
		used[l.Group][p] = true
	}
	return all
}
