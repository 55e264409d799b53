package console

import (
	"cmp"
	"net/netip"
	"slices"
	"time"

	"github.com/tlbproject/tlb/api"
)

// View is the page's data: a Snapshot arranged into panels.
type View struct {
	Taken    time.Time
	FileMode bool
	// APIErr is the banner of every panel built from the API server;
	// APILate and APIAge say it was late (as in Snapshot).
	APIErr            string
	APILate, APIAge   time.Duration
	Inventory         []EnvironmentRow
	VIPs              []VIPRow
	Components        []Component
	Problems          []Problem
	Events            []Event
	Leases            []Lease
	GatewaysInstalled bool
	Gateways          []Gateway
	// HasIPVS and IPVSErr: whether the local kernel was read, and why
	// not when it failed.
	HasIPVS bool
	IPVSErr string
}

// EnvironmentRow is one environment of the inventory with its clusters.
type EnvironmentRow struct {
	Environment string
	Used, Free  int64
	Clusters    []ClusterRow
}

// ClusterRow is one L4 cluster with its pools.
type ClusterRow struct {
	L4Cluster
	Pools []Pool
}

// VIPRow is one VIP and everything known about it.
type VIPRow struct {
	Address     string
	addr        netip.Addr
	Environment string
	L4Cluster   string
	Pool        string
	Services    []Service
	Directors   []DirectorVIP
	// BoundOn names the netd instances that have the VIP bound.
	BoundOn      []string
	Certificates []Certificate
	// Up and Down count the directors whose GTM answer is up or down.
	Up, Down int
	// Rate is the VIP's traffic over every director that reports a rate
	// (HasRate: at least one does).
	Rate    VIPRate
	HasRate bool
	// IPVS are the local kernel's IPVS services of the VIP (real servers
	// with weight, forwarding and connections).
	IPVS []api.IPVSService
	// Routes are the L7 routes the l7 servers serve on the VIP, from the
	// DSL files and the API server alike, sorted by port, host and path.
	Routes []VIPRoute
}

// DirectorVIP is what one director says about one VIP.
type DirectorVIP struct {
	Name       string
	Ready      bool
	GTM        GTMAnswer
	HasGTM     bool
	SessionsUp int
	Sessions   int
	// Announcing: ready, a BGP session established, prefixes announced,
	// and GTM up (or no health checks).
	Announcing bool
	announced  float64
	Traffic    []Sample
	// Rate is its traffic to the VIP per second, over RateOver (HasRate:
	// two samples were read).
	Rate     VIPRate
	HasRate  bool
	RateOver string
	// RealServers are the director's real servers and their health.
	RealServers []RealServer
}

// expiringDays is when a certificate becomes a problem.
const expiringDays = 14

// BuildView arranges s into the page's panels.
func BuildView(s Snapshot) View {
	v := View{Taken: s.Taken, FileMode: s.FileMode, APIErr: s.APIErr, APILate: s.APILate, APIAge: s.APIAge, Events: s.API.Events, Leases: s.API.Leases,
		GatewaysInstalled: s.API.GatewaysInstalled, Gateways: s.API.Gateways, HasIPVS: s.HasIPVS, IPVSErr: s.IPVSErr}
	v.Components = slices.Clone(s.Components)
	served := servedVersions(v.Components)
	for i := range v.Components {
		if st := v.Components[i].EnvoyState; st != nil {
			cp := *st
			cp.current(served)
			v.Components[i].EnvoyState = &cp
		}
	}
	slices.SortStableFunc(v.Components, func(a, b Component) int { return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Name, b.Name)) })
	v.Inventory = inventory(s.API)
	v.VIPs = vipRows(s)
	marked := s
	marked.Components = v.Components // with the Envoys' versions marked
	v.Problems = problems(marked, v.VIPs)
	return v
}

func inventory(state APIState) []EnvironmentRow {
	poolsOf := map[string][]Pool{}
	for _, p := range state.Pools {
		poolsOf[p.L4Cluster] = append(poolsOf[p.L4Cluster], p)
	}
	byEnv := map[string]*EnvironmentRow{}
	var envs []string
	for _, c := range state.Clusters {
		e, ok := byEnv[c.Environment]
		if !ok {
			e = &EnvironmentRow{Environment: c.Environment}
			byEnv[c.Environment] = e
			envs = append(envs, c.Environment)
		}
		pools := poolsOf[c.Name]
		slices.SortFunc(pools, func(a, b Pool) int { return cmp.Compare(a.Name, b.Name) })
		e.Clusters = append(e.Clusters, ClusterRow{L4Cluster: c, Pools: pools})
		e.Used += c.Used
		e.Free += c.Free
		delete(poolsOf, c.Name)
	}
	// Pools naming a cluster that does not exist still show.
	for name, pools := range poolsOf {
		e, ok := byEnv[""]
		if !ok {
			e = &EnvironmentRow{}
			byEnv[""] = e
			envs = append(envs, "")
		}
		e.Clusters = append(e.Clusters, ClusterRow{L4Cluster: L4Cluster{Name: name}, Pools: pools})
	}
	slices.Sort(envs)
	out := make([]EnvironmentRow, 0, len(envs))
	for _, env := range envs {
		e := byEnv[env]
		slices.SortFunc(e.Clusters, func(a, b ClusterRow) int { return cmp.Compare(a.Name, b.Name) })
		out = append(out, *e)
	}
	return out
}

// vipRows joins the API server's Services and pools with what every
// component says, one row per VIP any source knows.
func vipRows(s Snapshot) []VIPRow {
	rows := vipIndex{}
	for _, svc := range s.API.Services {
		for _, a := range svc.VIPs {
			if r := rows.row(a); r != nil {
				r.Services = append(r.Services, svc)
				r.Pool, r.L4Cluster = cmp.Or(r.Pool, svc.Pool), cmp.Or(r.L4Cluster, svc.L4Cluster)
			}
		}
	}
	certs := map[string]Certificate{}
	for _, c := range s.Components {
		for _, ct := range c.Certificates {
			if old, ok := certs[ct.Name]; !ok || ct.DaysLeft < old.DaysLeft {
				certs[ct.Name] = ct
			}
		}
		rows.addComponent(c)
	}
	for _, svc := range s.IPVS {
		if r := rows.row(svc.VIP); r != nil {
			r.IPVS = append(r.IPVS, svc)
		}
	}
	envOf := map[string]string{}
	for _, c := range s.API.Clusters {
		envOf[c.Name] = c.Environment
	}
	pools := poolPrefixes(s.API.Pools)
	out := make([]VIPRow, 0, len(rows))
	for _, r := range rows {
		r.finish(pools, envOf, certs)
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b VIPRow) int {
		return a.addr.Compare(b.addr)
	})
	return out
}

// vipIndex holds the VIP rows being built, by address.
type vipIndex map[netip.Addr]*VIPRow

// row returns the row of address a, adding it when new; nil when a is not
// an address.
func (x vipIndex) row(a string) *VIPRow {
	addr, err := netip.ParseAddr(a)
	if err != nil {
		return nil
	}
	r, ok := x[addr]
	if !ok {
		r = &VIPRow{Address: addr.String(), addr: addr}
		x[addr] = r
	}
	return r
}

// addComponent adds what component c says of each VIP: a director's GTM
// answer and traffic, a netd's bound VIPs, an l7 server's routes.
func (x vipIndex) addComponent(c Component) {
	for a, ans := range c.GTM {
		if r := x.row(a); r != nil {
			d := directorVIP(r, c)
			d.GTM, d.HasGTM = ans, true
		}
	}
	for a, samples := range c.Traffic {
		if r := x.row(a); r != nil {
			directorVIP(r, c).Traffic = samples
		}
	}
	for a, rate := range c.VIPRates {
		if r := x.row(a); r != nil {
			d := directorVIP(r, c)
			d.Rate, d.HasRate, d.RateOver = rate, true, c.RateWindow()
		}
	}
	for _, a := range c.Bound {
		if r := x.row(a); r != nil {
			r.BoundOn = append(r.BoundOn, c.Name)
		}
	}
	for _, rt := range c.Routes {
		if r := x.row(rt.VIP); r != nil {
			r.Routes = append(r.Routes, VIPRoute{Server: c.Name, RouteRow: rt})
		}
	}
}

// finish completes a row once every source was read: its pool (from the
// pools' CIDRs when no Service named one), environment, route order,
// certificates and the directors' announcing and up/down counts.
func (r *VIPRow) finish(pools []poolPrefix, envOf map[string]string, certs map[string]Certificate) {
	if r.Pool == "" {
		for _, p := range pools {
			if p.prefix.Contains(r.addr) {
				r.Pool, r.L4Cluster = p.pool.Name, cmp.Or(r.L4Cluster, p.pool.L4Cluster)
				break
			}
		}
	}
	r.Environment = envOf[r.L4Cluster]
	slices.SortStableFunc(r.Routes, func(a, b VIPRoute) int {
		return cmp.Or(cmp.Compare(a.Port, b.Port), cmp.Compare(a.Host, b.Host), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Server, b.Server))
	})
	for _, svc := range r.Services {
		if svc.L7 != nil && svc.L7.TLSSecret != "" {
			// l7/kube names a Service's certificate namespace.name.secret.
			if ct, ok := certs[svc.Namespace+"."+svc.Name+"."+svc.L7.TLSSecret]; ok {
				r.Certificates = append(r.Certificates, ct)
			}
		}
	}
	for i := range r.Directors {
		d := &r.Directors[i]
		if d.HasRate {
			r.HasRate = true
			r.Rate.ConnsPerSec += d.Rate.ConnsPerSec
			r.Rate.BytesPerSec += d.Rate.BytesPerSec
		}
		d.Announcing = d.Ready && d.SessionsUp > 0 && d.announced > 0 && (!d.HasGTM || d.GTM.Up)
		if d.HasGTM && d.GTM.Up {
			r.Up++
		} else if d.HasGTM {
			r.Down++
		}
	}
}

// directorVIP returns r's entry for director c, adding it when new.
func directorVIP(r *VIPRow, c Component) *DirectorVIP {
	for i := range r.Directors {
		if r.Directors[i].Name == c.Name {
			return &r.Directors[i]
		}
	}
	d := DirectorVIP{Name: c.Name, Ready: c.Ready, Sessions: len(c.Sessions), RealServers: c.RealServers, announced: c.Announced}
	for _, s := range c.Sessions {
		if s.Established {
			d.SessionsUp++
		}
	}
	r.Directors = append(r.Directors, d)
	return &r.Directors[len(r.Directors)-1]
}

type poolPrefix struct {
	prefix netip.Prefix
	pool   Pool
}

func poolPrefixes(pools []Pool) []poolPrefix {
	var out []poolPrefix
	for _, p := range pools {
		for _, c := range p.CIDRs {
			if pfx, err := netip.ParsePrefix(c); err == nil {
				out = append(out, poolPrefix{pfx, p})
			}
		}
	}
	return out
}
