package demo

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// consoleAddr is where the demo's console listens: the router's address
// on the client's link, in the router's namespace, which reaches every
// director's and gateway's obs listener.
const consoleAddr = "198.18.0.1:8480"

// consolePage is the console's budget for one page (--timeout): director1
// is dead, so every page waits this long for it. In the emulated VM the
// live components' answers can take seconds when the host is busy (a
// budget of 2 s showed every component but one unreachable right after
// the downloads), so the budget is generous and the demo waits for a
// page on which every live component answered.
const consolePage = 10 * time.Second

// showConsole starts `tlb console` on the router, pointed at both
// directors, both netds and both gateways' l7 (file mode: the demo has
// no API server), prints its address and the plain-text summary it
// serves (GET /?format=text), the state its page shows.
func showConsole(r *runner, s *site, binDir string, say func(string, ...any)) error {
	say("\n== 9. The console: `tlb console` on the router, reading both directors, both netds and both gateways' l7")
	args := []string{"console", "--listen", consoleAddr, "--timeout", consolePage.String()}
	live := []string{"director " + s.directors[1].Name}
	for i, d := range s.directors {
		args = append(args, "--director", fmt.Sprintf("%s=http://%s:9100", d.Name, s.directorAddr[i]))
	}
	for i, gw := range s.gateways {
		args = append(args, "--netd", fmt.Sprintf("%s=http://%s:9101", gw.Name, s.gwAddr[i]),
			"--l7", fmt.Sprintf("%s=http://%s", gw.Name, s.envoys[i].Metrics))
		live = append(live, "netd "+gw.Name, "l7 "+gw.Name)
	}
	s.router.Start(r, filepath.Join(binDir, "tlb"), args...)
	client := s.router.HTTPClient()
	client.Timeout = 3 * consolePage
	var summary string
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
		for _, c := range live {
			if !strings.Contains(summary, "\n  "+c+": ready\n") {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(2 * time.Minute); !everyLiveOneReady(); {
		if time.Now().After(deadline) {
			return fmt.Errorf("the console did not show %s ready within 2 minutes; last page:\n%s", strings.Join(live, ", "), summary)
		}
		time.Sleep(time.Second)
	}
	say("   console: http://%s/ (inside the lab VM, router namespace; the page, and ?format=text for this summary)", consoleAddr)
	say("   %s lost power in step 8, so the console shows it unreachable:\n%s", s.directors[0].Name, indent(summary))
	return nil
}
