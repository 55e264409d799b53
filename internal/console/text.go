package console

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteText writes v as plain text: the same state as the page (API
// banner, VIPs with their Services and directors, components with their
// BGP sessions, gateways, problems), for terminals and scripts such as
// the demo. GET /?format=text serves it.
func WriteText(w io.Writer, v View) error {
	p := &textPrinter{w: w}
	p.line("TLB console, taken %s", fmtTime(v.Taken))
	switch {
	case v.FileMode:
		p.line("API server: none (file mode)")
	case v.APIErr != "":
		p.line("API server unreachable: %s", v.APIErr)
	case v.APILate > 0 && v.APIAge > 0:
		p.line("API server: slow: no answer for %d ms, data from %s ago", v.APILate.Milliseconds(), v.APIAge.Round(time.Second))
	case v.APILate > 0:
		p.line("API server: slow: no answer yet after %d ms", v.APILate.Milliseconds())
	default:
		p.line("API server: ok")
	}
	p.line("")
	p.line("VIPs (%d):", len(v.VIPs))
	for _, r := range v.VIPs {
		var svcs []string
		for _, s := range r.Services {
			svcs = append(svcs, s.Namespace+"/"+s.Name)
		}
		p.line("  %s  pool %s  cluster %s  services [%s]  bound on [%s]",
			r.Address, orDash(r.Pool), orDash(r.L4Cluster), strings.Join(svcs, " "), strings.Join(r.BoundOn, " "))
		if r.HasRate {
			p.line("    traffic %s connections, %s in", r.Rate.Conns(), r.Rate.Bytes())
		}
		for _, d := range r.Directors {
			health := "no health answer"
			if d.HasGTM {
				health = "health " + upDown(d.GTM.Up)
			}
			traffic := ""
			if d.HasRate {
				traffic = fmt.Sprintf(", %s connections, %s in (over %s)", d.Rate.Conns(), d.Rate.Bytes(), d.RateOver)
			}
			p.line("    director %s: %s, %s, sessions %d/%d up, announcing %t%s",
				d.Name, readyWord(d.Ready), health, d.SessionsUp, d.Sessions, d.Announcing, traffic)
		}
		for _, rt := range r.Routes {
			p.line("    route %d %s%s (%s %s) -> %s [%s, on %s]",
				rt.Port, rt.Host, rt.Path, rt.Match, rt.Service, rt.Targets(), rt.Source, rt.Server)
		}
	}
	p.line("")
	p.line("Components (%d):", len(v.Components))
	for _, c := range v.Components {
		p.component(c)
	}
	p.line("")
	switch {
	case v.APIErr != "" || v.FileMode:
		p.line("Gateways: unknown (no API server)")
	case !v.GatewaysInstalled:
		p.line("Gateways: the Gateway API is not installed")
	default:
		p.line("Gateways (%d):", len(v.Gateways))
		for _, g := range v.Gateways {
			p.line("  %s/%s class %s addresses [%s] programmed %s",
				g.Namespace, g.Name, g.Class, strings.Join(g.Addresses, " "), orDash(g.Programmed))
		}
	}
	p.line("")
	p.line("Problems (%d):", len(v.Problems))
	for _, pr := range v.Problems {
		p.line("  %s %s: %s", pr.Source, pr.Object, pr.What)
	}
	return p.err
}

// component writes one component: ready or why not read, its answer
// time when slow, its BGP sessions and gateways.
func (p *textPrinter) component(c Component) {
	switch {
	case c.Err != "":
		p.line("  %s %s: unreachable: %s", c.Role, c.Name, c.Err)
		return
	case c.NoData:
		p.line("  %s %s: %s", c.Role, c.Name, c.Timing())
		return
	case c.Slow:
		p.line("  %s %s: %s, %s", c.Role, c.Name, readyWord(c.Ready), c.Timing())
	default:
		p.line("  %s %s: %s", c.Role, c.Name, readyWord(c.Ready))
	}
	for _, s := range c.Sessions {
		bfd := ""
		if s.BFD != "" {
			bfd = ", BFD " + s.BFD
		}
		p.line("    BGP peer %s: %s%s", s.Peer, map[bool]string{true: "established", false: "down"}[s.Established], bfd)
	}
	p.envoyLines(c)
}

// envoyLines writes what an l7 server says of its gateways and what an
// Envoy says of itself.
func (p *textPrinter) envoyLines(c Component) {
	for _, e := range c.Envoys {
		var types []string
		for _, t := range e.Types {
			types = append(types, fmt.Sprintf("%s %s%s", t.Type, orDash(t.Acked), map[bool]string{true: "", false: " (not current: sent " + t.Served + ")"}[t.InSync]))
		}
		p.line("    gateway %s (group %s): acknowledged %s", e.Node, e.Group, strings.Join(types, ", "))
	}
	if st := c.EnvoyState; st != nil {
		p.line("    envoy: %s, xDS %s, listeners %g active %g warming, LDS %s%s, CDS %s%s",
			orDash(st.State), map[bool]string{true: "connected", false: "NOT connected"}[st.Connected],
			st.ListenersActive, st.ListenersWarming, orDash(st.LDSVersion), currentWord(st.Compared, st.LDSCurrent),
			orDash(st.CDSVersion), currentWord(st.Compared, st.CDSCurrent))
	}
	for _, l := range c.Listeners {
		p.line("    listener %s: %g active connections", l.Labels, l.Value)
	}
}

// textPrinter writes lines and keeps the first error.
type textPrinter struct {
	w   io.Writer
	err error
}

func (p *textPrinter) line(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

// currentWord says whether a version is the one l7 serves now, when
// that is known.
func currentWord(compared, current bool) string {
	switch {
	case !compared:
		return ""
	case current:
		return " (current)"
	}
	return " (NOT current)"
}

func upDown(up bool) string {
	if up {
		return "up"
	}
	return "down"
}

func readyWord(ready bool) string {
	if ready {
		return "ready"
	}
	return "not ready"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
