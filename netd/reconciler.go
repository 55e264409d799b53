package netd

import (
	"fmt"
	"log/slog"
	"net/netip"

	"github.com/tlbproject/tlb/netd/model"
)

// Gateway reconciles one gateway node's kernel state towards a
// model.Gateway: observe, diff, return early when there is nothing to do,
// then apply only the difference.
type Gateway struct {
	links   TunnelLinks
	sysctls Sysctls
	clamp   MSSClamp
	log     *slog.Logger
}

// NewGateway returns a reconciler using the given kernel interfaces.
func NewGateway(links TunnelLinks, sysctls Sysctls, clamp MSSClamp, log *slog.Logger) *Gateway {
	return &Gateway{links: links, sysctls: sysctls, clamp: clamp, log: log}
}

// Result reports what one reconcile did.
type Result struct {
	Plan Plan
	// Writes is the number of kernel writes made (0 when already in sync).
	Writes int
}

// Reconcile brings the kernel to desired. On error the kernel may be
// partly changed; the next Reconcile continues from what it finds.
func (g *Gateway) Reconcile(desired model.Gateway) (Result, error) {
	desired, err := g.resolve(desired)
	if err != nil {
		return Result{}, err
	}
	actual, err := g.Observe(desired)
	if err != nil {
		return Result{}, err
	}
	plan, err := Diff(desired, actual)
	if err != nil {
		return Result{}, err
	}
	for _, v := range plan.Foreign {
		g.log.Warn("VIP already bound on tunnel by someone else; serving it but leaving it alone", "vip", v, "tunnel", desired.Tunnel)
	}
	if plan.Empty() {
		return Result{Plan: plan}, nil
	}
	g.log.Debug("applying gateway plan", "tunnel", desired.Tunnel, "plan", plan.String())
	n, err := g.Apply(desired, plan)
	return Result{Plan: plan, Writes: n}, err
}

// resolve sets desired's MSS by its policy, reading the default-route
// link's MTU when the policy needs it.
func (g *Gateway) resolve(desired model.Gateway) (model.Gateway, error) {
	mtu := 0
	if desired.NeedsLinkMTU() {
		var err error
		if mtu, err = g.links.RouteMTU(); err != nil {
			return model.Gateway{}, fmt.Errorf("read the path MTU to derive the MSS from (set netd.mtu to give it): %w", err)
		}
	}
	return desired.Resolve(mtu), nil
}

// Observe lists the actual state relevant to desired.
func (g *Gateway) Observe(desired model.Gateway) (Actual, error) {
	var a Actual
	var err error
	if a.Tunnel, err = g.links.Tunnel(desired.Tunnel); err != nil {
		return Actual{}, fmt.Errorf("read tunnel %s: %w", desired.Tunnel, err)
	}
	if a.Tunnel6, err = g.links.Tunnel(desired.Tunnel6); err != nil {
		return Actual{}, fmt.Errorf("read tunnel %s: %w", desired.Tunnel6, err)
	}
	for _, t := range []struct {
		state TunnelState
		name  string
		ipv6  bool
	}{{a.Tunnel, desired.Tunnel, false}, {a.Tunnel6, desired.Tunnel6, true}} {
		if !t.state.Exists {
			continue
		}
		addrs, err := g.links.Addrs(t.name)
		if err != nil {
			return Actual{}, fmt.Errorf("list addresses on %s: %w", t.name, err)
		}
		for _, x := range addrs {
			if x.Prefix.Addr().Is6() == t.ipv6 {
				a.Addrs = append(a.Addrs, x)
			}
		}
	}
	a.Sysctls = make(map[string]string)
	for _, s := range desired.Sysctls() {
		v, err := g.sysctls.Get(s.Key)
		if err != nil {
			if !a.Tunnel.Exists || desired.HasIPv6() && !a.Tunnel6.Exists {
				continue // a tunnel's own keys appear once it exists
			}
			return Actual{}, fmt.Errorf("read sysctl %s: %w", s.Key, err)
		}
		a.Sysctls[s.Key] = v
	}
	if a.Clamp, err = g.clamp.State(); err != nil {
		return Actual{}, fmt.Errorf("read mss clamp: %w", err)
	}
	if desired.GUEPort != 0 {
		if a.FOU, err = g.links.FOUReceivers(false); err != nil {
			return Actual{}, fmt.Errorf("list FOU receivers: %w", err)
		}
		if desired.HasIPv6() {
			if a.FOU6, err = g.links.FOUReceivers(true); err != nil {
				return Actual{}, fmt.Errorf("list IPv6 FOU receivers: %w", err)
			}
		}
	}
	return a, nil
}

// Apply makes the plan's changes in an order that never leaves a VIP bound
// without the settings DSR needs: tunnels, sysctls, up, GUE receiver,
// clamp, addresses.
// It returns the number of writes made before any error.
func (g *Gateway) Apply(desired model.Gateway, p Plan) (int, error) {
	n := 0
	name := desired.Tunnel
	if p.CreateTunnel {
		if err := g.links.CreateTunnel(name); err != nil {
			return n, fmt.Errorf("create ipip tunnel %s: %w", name, err)
		}
		n++
	}
	if p.CreateTunnel6 {
		if err := g.links.CreateTunnel6(desired.Tunnel6); err != nil {
			return n, fmt.Errorf("create ip6tnl tunnel %s: %w", desired.Tunnel6, err)
		}
		n++
	}
	for _, s := range p.Sysctls {
		if err := g.sysctls.Set(s.Key, s.Value); err != nil {
			return n, fmt.Errorf("set sysctl %s=%s: %w", s.Key, s.Value, err)
		}
		n++
	}
	if p.BringUp {
		if err := g.links.SetUp(name); err != nil {
			return n, fmt.Errorf("bring tunnel %s up: %w", name, err)
		}
		n++
	}
	if p.BringUp6 {
		if err := g.links.SetUp(desired.Tunnel6); err != nil {
			return n, fmt.Errorf("bring tunnel %s up: %w", desired.Tunnel6, err)
		}
		n++
	}
	if p.AddGUE != 0 {
		if err := g.links.AddGUEReceiver(p.AddGUE, false); err != nil {
			return n, fmt.Errorf("add gue receiver on udp port %d: %w", p.AddGUE, err)
		}
		n++
	}
	if p.AddGUE6 != 0 {
		if err := g.links.AddGUEReceiver(p.AddGUE6, true); err != nil {
			return n, fmt.Errorf("add ipv6 gue receiver on udp port %d: %w", p.AddGUE6, err)
		}
		n++
	}
	if p.ClampRebuild {
		if err := g.clamp.Rebuild(desired.MSS, desired.VIPs, desired.Ports); err != nil {
			return n, fmt.Errorf("rebuild mss clamp and port map (mss %d, %d VIPs, %d ports): %w", desired.MSS, len(desired.VIPs), len(desired.Ports), err)
		}
		n++
	} else if len(p.ClampAdd)+len(p.ClampDel) > 0 {
		if err := g.clamp.UpdateVIPs(p.ClampAdd, p.ClampDel); err != nil {
			return n, fmt.Errorf("update mss clamp VIPs (+%v -%v): %w", p.ClampAdd, p.ClampDel, err)
		}
		n++
	}
	for _, v := range p.AddVIPs {
		a := TunnelAddr{Prefix: netip.PrefixFrom(v, v.BitLen()), Label: desired.LabelFor(v)}
		if err := g.links.ReplaceAddr(desired.TunnelFor(v), a); err != nil {
			return n, fmt.Errorf("bind VIP %s on %s: %w", v, desired.TunnelFor(v), err)
		}
		n++
	}
	for _, a := range p.DelVIPs {
		dev := desired.TunnelFor(a.Prefix.Addr())
		if err := g.links.DelAddr(dev, a); err != nil {
			return n, fmt.Errorf("unbind VIP %s from %s: %w", a.Prefix, dev, err)
		}
		n++
	}
	return n, nil
}
