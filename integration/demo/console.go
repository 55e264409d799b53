package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/tlbproject/tlb/integration/gatewaylab"
)

// consoleAddr is where the demo's console listens: the router's address
// on the client's link, in the router's namespace, which reaches every
// director's and gateway's obs listener.
const consoleAddr = "198.18.0.1:8480"

// The console's budgets. consolePage (--timeout) is how long a page
// waits for any one component: each has its own budget, all at once, and
// a read that takes longer goes on in the background, its component shown
// slow with its last answer. consoleGiveUp (--give-up) is how long one
// read may run before its component is unreachable: director1 is dead
// (its packets dropped), so its reads run this long. In the emulated VM
// on a busy host a live component's answer can take seconds; with one
// deadline for the whole page and every read cancelled at it, answers
// slower than the deadline were thrown away on every page and every
// component was shown "unreachable: context deadline exceeded".
const (
	consolePage   = 5 * time.Second
	consoleGiveUp = 30 * time.Second
)

// showConsole starts `tlb console` on the router, pointed at both
// directors, both netds and both gateways' l7 (file mode: the demo has
// no API server), prints its address and the plain-text summary it
// serves (GET /?format=text), the state its page shows.
func showConsole(r *runner, s *site, binDir string, say func(string, ...any)) error {
	say("\n== 9. The console: `tlb console` on the router, reading both directors, both netds and both gateways' l7")
	args := []string{"console", "--listen", consoleAddr, "--timeout", consolePage.String(), "--give-up", consoleGiveUp.String()}
	live := []string{"director " + s.directors[1].Name}
	for i, d := range s.directors {
		args = append(args, "--director", fmt.Sprintf("%s=http://%s:9100", d.Name, s.directorAddr[i]))
	}
	for i, gw := range s.gateways {
		args = append(args, "--netd", fmt.Sprintf("%s=http://%s:9101", gw.Name, s.gwAddr[i]),
			"--l7", fmt.Sprintf("%s=http://%s", gw.Name, s.envoys[i].Metrics),
			"--envoy", fmt.Sprintf("%s=http://%s", gw.Name, s.envoys[i].StatsAddr))
		live = append(live, "netd "+gw.Name, "l7 "+gw.Name, "envoy "+gw.Name)
	}
	s.router.Start(r, filepath.Join(binDir, "tlb"), args...)
	client := s.router.HTTPClient()
	client.Timeout = 3 * consolePage
	var summary string
	dead := "\n  director " + s.directors[0].Name + ": unreachable: "
	everyLiveOneReady := func() bool {
		resp, err := client.Get("http://" + consoleAddr + "/?format=text")
		if err != nil {
			return false
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			return false
		}
		summary = string(b)
		// Ready, answering in time or slow ("ready, slow (2300 ms)").
		for _, c := range live {
			if !strings.Contains(summary, "\n  "+c+": ready\n") && !strings.Contains(summary, "\n  "+c+": ready, slow") {
				return false
			}
		}
		// Each gateway's Envoy has applied the versions its l7 serves.
		return strings.Contains(summary, dead) && strings.Count(summary, "(current), CDS ") == len(s.gateways) &&
			!strings.Contains(summary, "NOT current")
	}
	start := time.Now()
	for deadline := start.Add(3 * time.Minute); !everyLiveOneReady(); {
		if time.Now().After(deadline) {
			return fmt.Errorf("the console did not show %s ready and %s unreachable within 3 minutes; last page:\n%s",
				strings.Join(live, ", "), s.directors[0].Name, summary)
		}
		time.Sleep(time.Second)
	}
	say("   console: http://%s/ (inside the lab VM, router namespace; the page, and ?format=text for this summary)", consoleAddr)
	if err := showTraffic(s, client, say); err != nil {
		return err
	}
	say("   %s lost power in step 8: the console shows it unreachable once a read of it has run %v (--give-up),", s.directors[0].Name, consoleGiveUp)
	say("   every live component ready (\"slow\" with its answer time when it took over 1 s), each Envoy on the")
	say("   LDS and CDS versions its l7 serves now (current); %v after the console started:\n%s",
		time.Since(start).Round(time.Second), indent(summary))
	return nil
}

// showTraffic sends requests to the VIP between two pages of the console
// and shows the VIP's rate it then computes from the director's IPVS
// counters (two samples).
func showTraffic(s *site, console *http.Client, say func(string, ...any)) error {
	const n = 20
	page := func() string {
		resp, err := console.Get("http://" + consoleAddr + "/?format=text")
		if err != nil {
			return ""
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	_ = page() // the sample before
	client := gatewaylab.Client(s.client, vip+":443", s.l7.CA, false)
	for i := range n {
		if _, err := gatewaylab.Get(context.Background(), client, gatewaylab.Route{Host: gatewaylab.ShopHost, Path: "/", Upstream: "web"}); err != nil {
			return fmt.Errorf("request %d to the VIP: %w", i+1, err)
		}
	}
	var line string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		for _, l := range strings.Split(page(), "\n") {
			if strings.HasPrefix(l, "    traffic ") {
				line = strings.TrimSpace(l)
			}
		}
		if line != "" && !strings.HasPrefix(line, "traffic 0/s connections") {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the console showed no traffic on %s within a minute of %d requests; last: %q", vip, n, line)
		}
	}
	say("   %d HTTPS requests (new connections) to %s between two pages: the console's rate from %s's IPVS counters:", n, vip, s.directors[1].Name)
	say("     %s", line)
	return nil
}
