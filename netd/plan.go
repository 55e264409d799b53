package netd

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/tlbproject/tlb/netd/model"
)

// Actual is the kernel state netd reads before planning.
type Actual struct {
	Tunnel TunnelState
	// Tunnel6 is the IPv6 tunnel.
	Tunnel6 TunnelState
	// Addrs are the IPv4 tunnel's IPv4 addresses and the IPv6 tunnel's
	// IPv6 addresses (none of a tunnel that does not exist).
	Addrs []TunnelAddr
	// Sysctls maps keys to their current values; a key the kernel does not
	// have yet (the tunnel's, before it exists) is absent.
	Sysctls map[string]string
	Clamp   ClampState
	// FOU are the node's FOU receivers (port to "gue" or "direct"), read
	// only when the desired state has a GUE port.
	FOU map[uint16]string
	// FOU6 are the node's IPv6 FOU receivers, read only when the desired
	// state has a GUE port and an IPv6 VIP.
	FOU6 map[uint16]string
}

// Plan is the explicit difference between desired and actual state. Only
// the changes it lists are applied.
type Plan struct {
	// CreateTunnel creates the IPIP link.
	CreateTunnel bool
	// CreateTunnel6 creates the ip6tnl link (only while an IPv6 VIP is
	// desired).
	CreateTunnel6 bool
	// Sysctls are the parameters to write.
	Sysctls []model.Sysctl
	// BringUp sets the tunnel up.
	BringUp bool
	// BringUp6 sets the IPv6 tunnel up.
	BringUp6 bool
	// AddGUE, when not 0, is the UDP port of a GUE receiver to add.
	AddGUE uint16
	// AddGUE6, when not 0, is the UDP port of a GUE-over-IPv6 receiver to
	// add (the directors tunnel an IPv6 VIP's packets over IPv6).
	AddGUE6 uint16
	// ClampRebuild rebuilds netd's nftables table from scratch: the clamp
	// is not intact, its MSS changed or the port map changed.
	ClampRebuild bool
	// PortsAdd and PortsDel say how the port map changes (for logs and
	// tests); a change is applied by ClampRebuild, in one atomic batch.
	PortsAdd, PortsDel []model.PortMap
	// ClampAdd and ClampDel change only the VIP set of an intact table.
	ClampAdd, ClampDel []netip.Addr
	// AddVIPs are bound as /32 with netd's label on the IPIP tunnel, or
	// as /128 with netd's mark on the IPv6 one.
	AddVIPs []netip.Addr
	// DelVIPs are addresses netd bound earlier and no longer wants.
	DelVIPs []TunnelAddr
	// Foreign are desired VIPs already on the tunnel without netd's label:
	// they are served but left alone, and never removed by netd.
	Foreign []netip.Addr
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool { return p.Writes() == 0 }

// Writes counts the kernel writes the plan makes (a table rebuild is one
// atomic batch; a set update is one batch).
func (p Plan) Writes() int {
	n := len(p.Sysctls) + len(p.AddVIPs) + len(p.DelVIPs)
	for _, b := range []bool{p.CreateTunnel, p.CreateTunnel6, p.BringUp, p.BringUp6, p.AddGUE != 0, p.AddGUE6 != 0, p.ClampRebuild, !p.ClampRebuild && len(p.ClampAdd)+len(p.ClampDel) > 0} {
		if b {
			n++
		}
	}
	return n
}

// String summarises the plan for logs.
func (p Plan) String() string {
	var parts []string
	if p.CreateTunnel {
		parts = append(parts, "create tunnel")
	}
	if p.CreateTunnel6 {
		parts = append(parts, "create ipv6 tunnel")
	}
	for _, s := range p.Sysctls {
		parts = append(parts, "sysctl "+s.Key+"="+s.Value)
	}
	if p.BringUp {
		parts = append(parts, "bring tunnel up")
	}
	if p.BringUp6 {
		parts = append(parts, "bring ipv6 tunnel up")
	}
	if p.AddGUE != 0 {
		parts = append(parts, fmt.Sprintf("add gue receiver on udp port %d", p.AddGUE))
	}
	if p.AddGUE6 != 0 {
		parts = append(parts, fmt.Sprintf("add ipv6 gue receiver on udp port %d", p.AddGUE6))
	}
	if p.ClampRebuild {
		parts = append(parts, "rebuild mss clamp and port map")
	}
	for _, m := range p.PortsAdd {
		parts = append(parts, "map "+m.String())
	}
	for _, m := range p.PortsDel {
		parts = append(parts, "unmap "+m.String())
	}
	if len(p.ClampAdd)+len(p.ClampDel) > 0 {
		parts = append(parts, fmt.Sprintf("clamp set +%v -%v", p.ClampAdd, p.ClampDel))
	}
	for _, v := range p.AddVIPs {
		parts = append(parts, "bind "+v.String())
	}
	for _, a := range p.DelVIPs {
		parts = append(parts, "unbind "+a.Prefix.String())
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, "; ")
}

// Diff computes the plan that takes actual to desired. It is a pure
// function: it only compares data.
func Diff(desired model.Gateway, actual Actual) (Plan, error) {
	p, err := diffLinks(desired, actual)
	if err != nil {
		return Plan{}, err
	}

	for _, s := range desired.Sysctls() {
		if cur, ok := actual.Sysctls[s.Key]; !ok || strings.TrimSpace(cur) != s.Value {
			p.Sysctls = append(p.Sysctls, s)
		}
	}

	want := make(map[netip.Addr]bool, len(desired.VIPs))
	for _, v := range desired.VIPs {
		want[v] = true
	}
	have := make(map[netip.Addr]bool)
	for _, a := range actual.Addrs {
		ip := a.Prefix.Addr()
		owned := a.Label == desired.LabelFor(ip)
		switch {
		case owned && want[ip] && a.Prefix.IsSingleIP():
			have[ip] = true
		case owned:
			// Ours but no longer wanted, or bound with a wrong length.
			p.DelVIPs = append(p.DelVIPs, a)
		case want[ip]:
			// Someone else bound it: it is served, but not ours to manage.
			have[ip] = true
			p.Foreign = append(p.Foreign, ip)
		}
	}
	for _, v := range desired.VIPs {
		if !have[v] {
			p.AddVIPs = append(p.AddVIPs, v)
		}
	}

	c := actual.Clamp
	var mapped []model.PortMap
	if c.Intact {
		mapped = c.Ports
	}
	p.PortsAdd, p.PortsDel = portDiff(desired.Ports, mapped)
	if !c.Intact || c.MSS != desired.MSS || len(p.PortsAdd)+len(p.PortsDel) > 0 {
		p.ClampRebuild = true
	} else {
		p.ClampAdd, p.ClampDel = setDiff(desired.VIPs, c.VIPs)
	}
	return p, nil
}

// diffLinks plans the tunnels and GUE receivers, refusing links and
// receivers of another kind than netd's.
func diffLinks(desired model.Gateway, actual Actual) (Plan, error) {
	var p Plan
	if actual.Tunnel.Exists && actual.Tunnel.Kind != "ipip" {
		return Plan{}, fmt.Errorf("link %s is of type %q, not ipip: refusing to use or change it", desired.Tunnel, actual.Tunnel.Kind)
	}
	p.CreateTunnel = !actual.Tunnel.Exists
	p.BringUp = !actual.Tunnel.Up
	if desired.HasIPv6() {
		if actual.Tunnel6.Exists && actual.Tunnel6.Kind != "ip6tnl" {
			return Plan{}, fmt.Errorf("link %s is of type %q, not ip6tnl: refusing to use or change it", desired.Tunnel6, actual.Tunnel6.Kind)
		}
		p.CreateTunnel6 = !actual.Tunnel6.Exists
		p.BringUp6 = !actual.Tunnel6.Up
	}
	if port := desired.GUEPort; port != 0 {
		var err error
		if p.AddGUE, err = gueReceiver(port, actual.FOU, "udp"); err != nil {
			return Plan{}, err
		}
		if desired.HasIPv6() {
			if p.AddGUE6, err = gueReceiver(port, actual.FOU6, "ipv6 udp"); err != nil {
				return Plan{}, err
			}
		}
	}
	return p, nil
}

// gueReceiver returns port when have lacks a receiver on it, 0 when it
// has a GUE one, and an error for a receiver of another type.
func gueReceiver(port uint16, have map[uint16]string, what string) (uint16, error) {
	switch kind, ok := have[port]; {
	case !ok:
		return port, nil
	case kind != "gue":
		return 0, fmt.Errorf("%s port %d has a FOU receiver of type %s, not gue: refusing to use or change it", what, port, kind)
	}
	return 0, nil
}

// portDiff returns the mappings of want missing from have, and of have
// missing from want, both sorted.
func portDiff(want, have []model.PortMap) (add, del []model.PortMap) {
	h := make(map[model.PortMap]bool, len(have))
	for _, m := range have {
		h[m] = true
	}
	w := make(map[model.PortMap]bool, len(want))
	for _, m := range want {
		w[m] = true
		if !h[m] {
			add = append(add, m)
		}
	}
	for _, m := range have {
		if !w[m] {
			del = append(del, m)
		}
	}
	slices.SortFunc(add, model.ComparePortMaps)
	slices.SortFunc(del, model.ComparePortMaps)
	return add, del
}

// setDiff returns the elements of want missing from have, and of have
// missing from want, both sorted.
func setDiff(want, have []netip.Addr) (add, del []netip.Addr) {
	h := make(map[netip.Addr]bool, len(have))
	for _, a := range have {
		h[a] = true
	}
	w := make(map[netip.Addr]bool, len(want))
	for _, a := range want {
		w[a] = true
		if !h[a] {
			add = append(add, a)
		}
	}
	for _, a := range have {
		if !w[a] {
			del = append(del, a)
		}
	}
	cmp := func(a, b netip.Addr) int { return a.Compare(b) }
	slices.SortFunc(add, cmp)
	slices.SortFunc(del, cmp)
	return add, del
}
