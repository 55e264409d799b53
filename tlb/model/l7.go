package model

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// L7Service is one application behind a VIP's gateways (an L7 service of
// the VIP: a Kubernetes Service with tlb.io/l7 "true", or a file service
// entry that lists its L7 backends). A VIP that has L7 services is up for
// GTM (and announced in per-VIP mode) only while at least one of them has
// a ready backend; a VIP without any keeps the gateway-only rule.
//
// Its backends' state comes from one of two places: the source (Probe
// nil: ReadyBackends, e.g. EndpointSlice conditions read by tlb/kube) or
// the director's own probes (Probe set: a backend is ready while its
// probe state is up).
type L7Service struct {
	// VIP is the VIP the application is reached through; it must be the
	// VIP of a Service of the model.
	VIP netip.Addr
	// Name identifies it in logs and GTM answers: "team/web" from
	// Kubernetes, the service key "203.0.113.10:443/tcp" from a file.
	// Unique per VIP.
	Name string
	// ReadyBackends is how many backends the source reports ready. Used
	// when Probe is nil.
	ReadyBackends int
	// Probe, when set, has the director probe the backends itself.
	Probe *L7Probe
}

// L7Probe is how the director probes an L7 service's backends, with the
// interval, timeout and rise/fall of its health checks.
type L7Probe struct {
	// Backends are the application's addresses (ip:port). At least one.
	Backends []netip.AddrPort
	// Path, when set, makes each probe an HTTP GET of this path; empty:
	// a TCP connect.
	Path string
	// Status is the HTTP status expected with Path; 0 accepts any 2xx.
	Status int
}

// Key identifies the L7 service within a model.
func (l L7Service) Key() string { return l.VIP.String() + " " + l.Name }

// compareL7 orders L7 services by VIP, then name.
func compareL7(a, b L7Service) int {
	if c := a.VIP.Compare(b.VIP); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// sortedL7 returns deep copies of l sorted by VIP and name, each probe's
// backends sorted by address; nil when l is empty.
func sortedL7(l []L7Service) []L7Service {
	if len(l) == 0 {
		return nil
	}
	out := make([]L7Service, 0, len(l))
	for _, s := range l {
		if s.Probe != nil {
			p := *s.Probe
			p.Backends = slices.Clone(p.Backends)
			slices.SortFunc(p.Backends, netip.AddrPort.Compare)
			s.Probe = &p
		}
		out = append(out, s)
	}
	slices.SortFunc(out, compareL7)
	return out
}

// validateL7 checks the L7 services of d; bad gets the index, the name
// and the field of each problem.
func validateL7(d Desired, bad func(i int, name, field, format string, args ...any)) {
	vips := map[netip.Addr]bool{}
	for _, s := range d.Services {
		vips[s.VIP] = true
	}
	seen := map[string]int{}
	for i, l := range d.L7 {
		b := func(field, format string, args ...any) { bad(i, l.Name, field, format, args...) }
		switch {
		case !l.VIP.IsValid():
			b("vip", "must be an IP address")
		case !vips[l.VIP]:
			b("vip", "%s is the VIP of no service", l.VIP)
		}
		if strings.TrimSpace(l.Name) == "" {
			b("name", "required")
		} else if first, dup := seen[l.Key()]; dup {
			b("name", "duplicate of l7[%d] (same vip and name)", first)
		} else {
			seen[l.Key()] = i
		}
		if l.ReadyBackends < 0 {
			b("readyBackends", "must not be negative")
		}
		if l.Probe != nil {
			validateProbe(*l.Probe, l.ReadyBackends, b)
		}
	}
}

func validateProbe(p L7Probe, ready int, bad func(field, format string, args ...any)) {
	if ready != 0 {
		bad("readyBackends", "must be 0 with a probe (the probes decide)")
	}
	if len(p.Backends) == 0 {
		bad("probe.backends", "at least one backend is required")
	}
	seen := map[netip.AddrPort]int{}
	for j, a := range p.Backends {
		field := fmt.Sprintf("probe.backends[%d]", j)
		switch {
		case !a.Addr().IsValid() || a.Addr().IsUnspecified() || a.Addr().IsMulticast():
			bad(field, "%s is not a unicast ip:port", a)
		case a.Addr().Zone() != "" || a.Addr().Is4In6():
			bad(field, "%s must be a plain IPv4 or IPv6 address with a port", a)
		case a.Port() == 0:
			bad(field, "%s has no port", a)
		default:
			if first, dup := seen[a]; dup {
				bad(field, "%s is a duplicate of probe.backends[%d]", a, first)
			}
			seen[a] = j
		}
	}
	if p.Path != "" && (!strings.HasPrefix(p.Path, "/") || strings.ContainsAny(p.Path, " \t\r\n#")) {
		bad("probe.path", "%q is not an absolute URL path", p.Path)
	}
	if p.Status != 0 && (p.Status < 100 || p.Status > 599) {
		bad("probe.status", "%d is not an HTTP status (100..599)", p.Status)
	}
	if p.Status != 0 && p.Path == "" {
		bad("probe.status", "only applies with probe.path (an HTTP probe)")
	}
}
