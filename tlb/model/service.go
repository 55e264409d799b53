package model

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// Protocol is the transport protocol of a virtual service.
type Protocol string

// Protocols a virtual service can carry.
const (
	TCP  Protocol = "tcp"
	UDP  Protocol = "udp"
	SCTP Protocol = "sctp"
)

// Scheduler names an IPVS scheduler (the kernel module ip_vs_<name>).
type Scheduler string

// Schedulers known to the kernel. Maglev (mh) is the default because every
// director holding the same real servers in the same order picks the same
// real server for a flow, so flows survive a director's loss.
const (
	Maglev                      Scheduler = "mh"
	RoundRobin                  Scheduler = "rr"
	WeightedRoundRobin          Scheduler = "wrr"
	LeastConnection             Scheduler = "lc"
	WeightedLeastConnection     Scheduler = "wlc"
	SourceHashing               Scheduler = "sh"
	DestinationHashing          Scheduler = "dh"
	LocalityLeastConnection     Scheduler = "lblc"
	LocalityLeastConnectionRepl Scheduler = "lblcr"
	ShortestExpectedDelay       Scheduler = "sed"
	NeverQueue                  Scheduler = "nq"
	WeightedFailover            Scheduler = "fo"
	WeightedOverflow            Scheduler = "ovf"
	PowerOfTwoRandomChoices     Scheduler = "twos"

	// DefaultScheduler is the scheduler of a service that names none.
	DefaultScheduler = Maglev
)

const (
	defaultWeight = 1
	maxWeight     = 65535 // what ipvsadm accepts
)

var knownSchedulers = []Scheduler{
	Maglev, RoundRobin, WeightedRoundRobin, LeastConnection, WeightedLeastConnection,
	SourceHashing, DestinationHashing, LocalityLeastConnection, LocalityLeastConnectionRepl,
	ShortestExpectedDelay, NeverQueue, WeightedFailover, WeightedOverflow, PowerOfTwoRandomChoices,
}

// Key identifies a virtual service: VIP, protocol and port.
type Key struct {
	VIP      netip.Addr
	Protocol Protocol
	Port     uint16
}

// String renders the key as "203.0.113.10:80/tcp".
func (k Key) String() string {
	return netip.AddrPortFrom(k.VIP, k.Port).String() + "/" + string(k.Protocol)
}

// Compare orders keys by VIP, then port, then protocol.
func (k Key) Compare(o Key) int {
	if c := k.VIP.Compare(o.VIP); c != 0 {
		return c
	}
	if c := cmp.Compare(k.Port, o.Port); c != 0 {
		return c
	}
	return cmp.Compare(k.Protocol, o.Protocol)
}

// Service is one IPVS virtual service, IPv4 or IPv6. Forwarding to its
// real servers is always tunnelling (direct server return through gateway
// nodes), in the VIP's family: IPIP (IPv6-in-IPv6 for an IPv6 VIP), or
// GUE over the VIP's family when Encap says so. Its real servers are
// therefore the gateways' addresses of the VIP's family.
type Service struct {
	VIP       netip.Addr
	Protocol  Protocol
	Port      uint16
	Scheduler Scheduler
	// Flags are scheduler flags; nil means the scheduler's defaults
	// (mh-fallback and mh-port for mh), an empty slice means none.
	Flags       []Flag
	RealServers []RealServer
	// Encap is the tunnel to every real server: the L4 cluster's
	// setting (the zero value is IPIP).
	Encap Encap
}

// Key returns the service's identity.
func (s Service) Key() Key { return Key{VIP: s.VIP, Protocol: s.Protocol, Port: s.Port} }

// RealServer is a gateway node behind a virtual service.
type RealServer struct {
	// Addr is the gateway's address of the service's VIP family (the
	// outer destination of the tunnel).
	Addr netip.Addr
	// Weight is the share of new flows; 0 drains the real server: no new
	// flows, existing ones keep working.
	Weight int
	// Draining takes the real server out of service: the director gives
	// it weight 0, then removes it once no connection to it is active or
	// its drain timeout has passed (Kubernetes: the Node annotation
	// tlb.io/drain). The director's own programming never sees it: the
	// agent turns it into a weight or an absence.
	Draining bool
	// DrainSince is when the drain began; zero means when this director
	// first saw it.
	DrainSince time.Time
}

// Desired is the whole desired state of one director.
type Desired struct {
	Services []Service
	// VIPRanges, when not empty, are the prefixes every VIP must be in.
	VIPRanges []netip.Prefix
	// L7 are the applications behind the VIPs, with their backends'
	// state; nil when no VIP has one. They never change IPVS: they decide
	// the VIP's health (GTM, per-VIP announcements).
	L7 []L7Service
}

// WithDefaults returns a copy of s with defaults filled in: scheduler mh,
// and for mh the flags mh-fallback and mh-port when Flags is nil.
func (s Service) WithDefaults() Service {
	out := s
	if out.Scheduler == "" {
		out.Scheduler = DefaultScheduler
	}
	if out.Flags == nil {
		out.Flags = DefaultFlags(out.Scheduler)
	} else {
		out.Flags = slices.Clone(out.Flags)
	}
	out.RealServers = slices.Clone(s.RealServers)
	out.Encap = s.Encap.Normal()
	return out
}

// DefaultFlags returns the flags a scheduler gets when none are given.
func DefaultFlags(s Scheduler) []Flag {
	if s == Maglev {
		return []Flag{MHFallback, MHPort}
	}
	return []Flag{}
}

// DefaultWeight is the weight of a real server whose weight is not given.
func DefaultWeight() int { return defaultWeight }

// Canonical returns the real servers in the canonical order: sorted by
// address. Every director adds real servers in an order derived from this
// one, so all build the same Maglev table for the same set.
func (s Service) Canonical() []RealServer {
	out := slices.Clone(s.RealServers)
	slices.SortFunc(out, func(a, b RealServer) int { return a.Addr.Compare(b.Addr) })
	return out
}

// Sorted returns a copy of d with defaults applied, services sorted by key,
// real servers in canonical order and L7 services sorted by VIP and name.
func (d Desired) Sorted() Desired {
	out := Desired{VIPRanges: slices.Clone(d.VIPRanges), Services: make([]Service, 0, len(d.Services)), L7: sortedL7(d.L7)}
	for _, s := range d.Services {
		s = s.WithDefaults()
		s.RealServers = s.Canonical()
		out.Services = append(out.Services, s)
	}
	slices.SortFunc(out.Services, func(a, b Service) int { return a.Key().Compare(b.Key()) })
	return out
}

// String renders the service key, for logs and errors.
func (s Service) String() string { return s.Key().String() }

func (p Protocol) valid() bool { return p == TCP || p == UDP || p == SCTP }

func (s Scheduler) valid() bool { return slices.Contains(knownSchedulers, s) }

func schedulerList() string { return fmt.Sprint(knownSchedulers) }
