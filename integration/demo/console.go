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

// showConsole starts `tlb console` on the router, pointed at both
// directors, both netds and both gateways' l7 (file mode: the demo has
// no API server),
// prints its address and the plain-text summary it serves
// (GET /?format=text), the state its page shows.
func showConsole(r *runner, s *site, binDir string, say func(string, ...any)) error {
	say("\n== 9. The console: `tlb console` on the router, reading both directors, both netds and both gateways' l7")
	args := []string{"console", "--listen", consoleAddr, "--timeout", "2s"}
	for i, d := range s.directors {
		args = append(args, "--director", fmt.Sprintf("%s=http://%s:9100", d.Name, s.directorAddr[i]))
	}
	for i, gw := range s.gateways {
		args = append(args, "--netd", fmt.Sprintf("%s=http://%s:9101", gw.Name, s.gwAddr[i]),
			"--l7", fmt.Sprintf("%s=http://%s", gw.Name, s.envoys[i].Metrics))
	}
	s.router.Start(r, filepath.Join(binDir, "tlb"), args...)
	client := s.router.HTTPClient()
	client.Timeout = 10 * time.Second
	var summary string
	waitFor(r, 30*time.Second, "the console answers on "+consoleAddr, func() bool {
		resp, err := client.Get("http://" + consoleAddr + "/?format=text")
		if err != nil {
			return false
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		summary = string(b)
		return err == nil && resp.StatusCode == http.StatusOK
	})
	say("   console: http://%s/ (inside the lab VM, router namespace; the page, and ?format=text for this summary)", consoleAddr)
	say("   %s lost power in step 8, so the console shows it unreachable:\n%s", s.directors[0].Name, indent(summary))
	if !strings.Contains(summary, "director "+s.directors[1].Name+": ready") {
		return fmt.Errorf("the console does not show %s ready:\n%s", s.directors[1].Name, summary)
	}
	return nil
}
