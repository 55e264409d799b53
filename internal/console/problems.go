package console

import (
	"fmt"
	"strings"
	"time"
)

// Problem is one thing an operator should look at.
type Problem struct {
	// Source is where it was seen: "api", or a component's role and name.
	Source string
	// Object is what it is about (a VIP, a Service, a peer, a pool).
	Object string
	What   string
}

// componentProblems adds what is wrong with one component.
func componentProblems(c Component, add func(src, obj, format string, args ...any)) {
	src := string(c.Role) + " " + c.Name
	if c.Err != "" {
		add(src, c.URL, "unreachable: %s", c.Err)
		return
	}
	if c.NoData || c.Pending > 0 {
		add(src, c.URL, "%s", c.Timing())
		if c.NoData {
			return
		}
	}
	if !c.Ready {
		add(src, c.Name, "not ready: %s", c.ReadyReason)
	}
	for _, ss := range c.Sessions {
		if !ss.Established {
			add(src, "peer "+ss.Peer, "BGP session down")
		}
		if ss.BFD != "" && ss.BFD != "up" {
			add(src, "peer "+ss.Peer, "BFD session %s", ss.BFD)
		}
	}
	if c.RejectedRecent > 0 {
		add(src, "config", "%g configuration(s) rejected in the last %s; the last good one is in force", c.RejectedRecent, c.RateWindow())
	}
	for _, n := range c.NACKsRecent {
		add(src, n.Labels, "%g xDS NACK(s) in the last %s", n.Value, c.RateWindow())
	}
	for _, e := range c.Envoys {
		for _, t := range e.Types {
			if !t.InSync {
				add(src, "gateway "+e.Node, "has not acknowledged the current %s config (acknowledged %q, sent %q)", t.Type, t.Acked, t.Served)
			}
		}
	}
	if st := c.EnvoyState; st != nil && !st.Connected {
		add(src, "xDS", "Envoy is not connected to its l7 server")
	}
	if st := c.EnvoyState; st != nil && st.Compared && (!st.LDSCurrent || !st.CDSCurrent) {
		add(src, "xDS", "Envoy has not applied the config l7 serves now (LDS %s, CDS %s)", orDash(st.LDSVersion), orDash(st.CDSVersion))
	}
	if c.ConfigProblems > 0 {
		add(src, "L7 config", "%g problem(s) in the last published config", c.ConfigProblems)
	}
	for _, ct := range c.Certificates {
		if ct.DaysLeft < expiringDays {
			add(src, "certificate "+ct.Name, "expires in %.1f days", ct.DaysLeft)
		}
	}
}

// poolFullPercent is the use above which a pool is a problem.
const poolFullPercent = 90

// problems lists, in a stable order: the sources that could not be read
// or have not answered in time, components not ready, BGP sessions down,
// configs rejected and NACKs since the previous sample (not since start),
// gateways that have not acknowledged the current config, Envoys cut from
// l7, L7 config problems, certificates near expiry, VIPs down for GTM,
// pools nearly full, and the recent Warning Events about our objects.
func problems(s Snapshot, vips []VIPRow) []Problem {
	var out []Problem
	add := func(src, obj, format string, args ...any) {
		out = append(out, Problem{Source: src, Object: obj, What: fmt.Sprintf(format, args...)})
	}
	if s.APIErr != "" {
		add("api", "API server", "unreachable: %s", s.APIErr)
	}
	if s.APILate > 0 {
		if s.APIAge > 0 {
			add("api", "API server", "slow: no answer for %d ms, showing its data from %s ago", s.APILate.Milliseconds(), s.APIAge.Round(time.Second))
		} else {
			add("api", "API server", "slow: no answer yet after %d ms", s.APILate.Milliseconds())
		}
	}
	if s.IPVSErr != "" {
		add("ipvs", "local IPVS", "unreadable: %s", s.IPVSErr)
	}
	for _, c := range s.Components {
		componentProblems(c, add)
	}
	for _, v := range vips {
		if v.Down > 0 {
			var names []string
			for _, d := range v.Directors {
				if d.HasGTM && !d.GTM.Up {
					names = append(names, d.Name)
				}
			}
			add("gtm", "VIP "+v.Address, "down for GTM on %s", strings.Join(names, ", "))
		}
	}
	for _, p := range s.API.Pools {
		if total := p.Used + p.Free; total > 0 && p.Used*100 > total*poolFullPercent {
			add("api", "VIPPool "+p.Name, "%d of %d addresses used (over %d%%)", p.Used, total, poolFullPercent)
		}
	}
	for _, e := range s.API.Events {
		obj := e.Kind + " " + e.Name
		if e.Namespace != "" {
			obj = e.Kind + " " + e.Namespace + "/" + e.Name
		}
		add("event", obj, "%s: %s (x%d)", e.Reason, e.Message, e.Count)
	}
	return out
}
