package model

import (
	"errors"
	"fmt"
	"net/netip"
)

// FieldError is one problem with the desired state, naming the object and
// the field.
type FieldError struct {
	// Service is the service key ("203.0.113.10:80/tcp"), or for an L7
	// service its name; empty for errors that concern no single service.
	Service string
	// List is ListServices (also when empty) or ListL7: the list Index
	// points into.
	List string
	// Index is the position of the service in Desired.Services (or
	// Desired.L7).
	Index int
	// Field is the path of the field inside the service, e.g.
	// "realServers[1].weight".
	Field string
	// Reason says what is wrong.
	Reason string
}

// Lists a FieldError can point into.
const (
	ListServices = "services"
	ListL7       = "l7"
)

// Error renders "service 203.0.113.10:80/tcp: realServers[1].weight: must be 0..65535"
// or "l7[0] (team/web): vip: ...".
func (e *FieldError) Error() string {
	if e.List == ListL7 {
		return fmt.Sprintf("l7[%d] (%s): %s: %s", e.Index, e.Service, e.Field, e.Reason)
	}
	if e.Service == "" {
		return fmt.Sprintf("services[%d]: %s: %s", e.Index, e.Field, e.Reason)
	}
	return fmt.Sprintf("service %s: %s: %s", e.Service, e.Field, e.Reason)
}

// FieldErrors returns the FieldErrors inside err (as joined by Validate).
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range j.Unwrap() {
				walk(c)
			}
			return
		}
		var fe *FieldError
		if errors.As(e, &fe) {
			out = append(out, fe)
		}
	}
	walk(err)
	return out
}

// Validate checks d after defaults are applied and returns every problem
// found, joined, each a *FieldError naming the service and field. A nil
// result means d can be applied as a whole.
func (d Desired) Validate() error {
	var errs []error
	seen := make(map[Key]int, len(d.Services))
	for i, raw := range d.Services {
		s := raw.WithDefaults()
		name := ""
		if s.VIP.IsValid() && s.Protocol.valid() && s.Port != 0 {
			name = s.Key().String()
		}
		bad := func(field, format string, args ...any) {
			errs = append(errs, &FieldError{Service: name, Index: i, Field: field, Reason: fmt.Sprintf(format, args...)})
		}
		switch {
		case !s.VIP.IsValid():
			bad("vip", "must be an IP address")
		case s.VIP.Zone() != "":
			bad("vip", "must not carry a zone")
		case s.VIP.Is4In6():
			bad("vip", "%s is IPv4-mapped; write it as %s", s.VIP, s.VIP.Unmap())
		case s.VIP.IsUnspecified() || s.VIP.IsMulticast() || s.VIP.IsLoopback():
			bad("vip", "%s is not a unicast address", s.VIP)
		case len(d.VIPRanges) > 0 && !inRanges(d, s):
			bad("vip", "%s is outside the VIP ranges %v", s.VIP, d.VIPRanges)
		}
		if !s.Protocol.valid() {
			bad("protocol", "%q is not one of tcp, udp, sctp", s.Protocol)
		}
		if s.Port == 0 {
			bad("port", "must be 1..65535")
		}
		if !s.Scheduler.valid() {
			bad("scheduler", "%q is not one of %s", s.Scheduler, schedulerList())
		}
		for j, f := range s.Flags {
			info, ok := flagTable[f]
			switch {
			case !ok:
				bad(fmt.Sprintf("flags[%d]", j), "unknown flag %q (known: mh-fallback, mh-port, sh-fallback, sh-port)", f)
			case info.scheduler != s.Scheduler:
				bad(fmt.Sprintf("flags[%d]", j), "flag %q needs scheduler %s, not %s", f, info.scheduler, s.Scheduler)
			}
		}
		if name != "" {
			if first, dup := seen[s.Key()]; dup {
				bad("vip", "duplicate of services[%d] (same vip, protocol and port)", first)
			} else {
				seen[s.Key()] = i
			}
		}
		if field, reason := s.Encap.Check(); field != "" {
			bad("encapsulation."+field, "%s", reason)
		}
		validateRealServers(s, bad)
	}
	validateL7(d, func(i int, name, field, format string, args ...any) {
		errs = append(errs, &FieldError{Service: name, List: ListL7, Index: i, Field: field, Reason: fmt.Sprintf(format, args...)})
	})
	return errors.Join(errs...)
}

func validateRealServers(s Service, bad func(field, format string, args ...any)) {
	rsSeen := make(map[string]int, len(s.RealServers))
	for j, rs := range s.RealServers {
		field := fmt.Sprintf("realServers[%d]", j)
		switch {
		case !rs.Addr.IsValid():
			bad(field+".address", "must be an IP address")
		case rs.Addr.Zone() != "":
			bad(field+".address", "must not carry a zone")
		case rs.Addr.Is4In6():
			bad(field+".address", "%s is IPv4-mapped; write it as %s", rs.Addr, rs.Addr.Unmap())
		case rs.Addr.IsUnspecified() || rs.Addr.IsMulticast():
			bad(field+".address", "%s is not a unicast address", rs.Addr)
		case s.VIP.IsValid() && rs.Addr.Is4() != s.VIP.Is4():
			bad(field+".address", "%s is not of the VIP's address family: a gateway is reached through a tunnel of the VIP's "+
				"family (IPIP for an IPv4 VIP, IPv6-in-IPv6 for an IPv6 VIP), so give it its %s address", rs.Addr, familyName(s.VIP))
		default:
			if first, dup := rsSeen[rs.Addr.String()]; dup {
				bad(field+".address", "%s is a duplicate of realServers[%d]", rs.Addr, first)
			}
			rsSeen[rs.Addr.String()] = j
		}
		if rs.Weight < 0 || rs.Weight > maxWeight {
			bad(field+".weight", "must be 0..%d", maxWeight)
		}
	}
}

func familyName(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}

func inRanges(d Desired, s Service) bool {
	for _, p := range d.VIPRanges {
		if p.Contains(s.VIP) {
			return true
		}
	}
	return false
}
