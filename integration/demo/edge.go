package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tlbproject/tlb/integration/gatewaylab"
)

// startEdge starts the backends, then netd and the gateway (l7 serve and
// Envoy, as deploy/envoy runs them) on each gateway node, and shows what
// they hold.
func startEdge(r *runner, s *site, binDir string, say func(string, ...any)) {
	say("\n== 2. The application: backends on app1 and app2 (web and api for %s, files for %s)", gatewaylab.ShopHost, gatewaylab.MediaHost)
	for _, b := range s.l7.StartBackends(r, s.apps) {
		say("   %-12s http://%s", b.Name(), b.Addr)
	}

	say("\n== 3. netd on each gateway: tunl0 up, VIP bound on it, DSR sysctls, MSS clamp")
	for i, gw := range s.gateways {
		// The obs listener on the gateway's address, for the console.
		cfg := r.writeFile(s.tmp, gw.Name+".yaml", fmt.Sprintf("netd:\n  metricsAddress: %s:9101\n  mss: 1440\nvips: [%s]\n", s.gwAddr[i], vip))
		gw.Start(r, filepath.Join(binDir, "netd"), "run", "--config", cfg)
		waitFor(r, 20*time.Second, gw.Name+" binds the VIP on tunl0", func() bool {
			out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
			return strings.Contains(string(out), vip+"/32")
		})
		out, _ := gw.Cmd("ip", "-br", "addr", "show", "dev", "tunl0").CombinedOutput()
		say("   %s: %s", gw.Name, strings.Join(strings.Fields(string(out)), " "))
	}

	say("\n== 4. Envoy on each gateway, started as deploy/envoy/gateway.yaml starts it: `l7 bootstrap`,")
	say("   then `l7 serve` (the DSL: https://%s and https://%s on %s:443, a certificate each, chosen by SNI;", gatewaylab.ShopHost, gatewaylab.MediaHost, vip)
	say("   :80 redirects to https) feeding Envoy over ADS on a unix socket; Envoy binds %s:443 and :80 itself", vip)
	start := time.Now()
	s.envoys = gatewaylab.StartGateways(r, s.gateways, s.gwAddr, s.l7.Write(r))
	say("   both Envoys ready after %v (their first listeners, clusters and certificates from l7)", time.Since(start).Round(100*time.Millisecond))
	for i, g := range s.envoys {
		ls, err := g.Listeners(context.Background())
		if err != nil {
			r.Fatalf("%s's listeners: %v", s.gateways[i].Name, err)
		}
		say("   %s: envoy pid %d, %s; listeners %s; /ready on %s", s.gateways[i].Name, g.EnvoyCmd.Process.Pid,
			credentials(g.EnvoyCmd.Process.Pid), strings.Join(ls, " "), g.StatsAddr)
	}
}

// credentials reads a process's user and effective capabilities.
func credentials(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	var uid, caps string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "Uid":
			uid = strings.Fields(v)[0]
		case "CapEff":
			caps = strings.TrimSpace(v)
		}
	}
	names := "none"
	if c, err := strconv.ParseUint(caps, 16, 64); err == nil && c == 1<<10 {
		names = "cap_net_bind_service only"
	} else if c != 0 {
		names = "0x" + caps
	}
	return fmt.Sprintf("uid %s, capabilities: %s", uid, names)
}
