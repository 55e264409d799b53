package demo

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tlbproject/tlb/bgp/birdlab"
	"github.com/tlbproject/tlb/integration/gatewaylab"
)

// The downloads of step 8: downloads of downloadSize bytes each, paced by
// the backend (gatewaylab.DownloadPace per 32 KiB, ~3 s each), long
// enough to lose a director in the middle.
const (
	downloadSize = 4 << 20
	downloads    = 10
)

// showRoutes prints BIRD's route for the VIP range, waiting until its
// next hops are exactly want, and the router's kernel route.
func showRoutes(ctx context.Context, r *runner, s *site, say func(string, ...any), want []string) {
	start := time.Now()
	_, _, err := s.bird.WaitRoutes(ctx, vipRange, 60*time.Second, func(rs []birdlab.Route) bool {
		if len(rs) != len(want) {
			return false
		}
		for i, rt := range rs {
			if rt.NextHop != want[i] {
				return false
			}
		}
		return true
	})
	if err != nil {
		r.Fatalf("BIRD's route for %s: %v", vipRange, err)
	}
	out, _ := s.bird.Birdc(ctx, "show", "route", vipRange)
	say("   BIRD on the router (`birdc show route %s`; next hops %s, waited %v):\n%s",
		vipRange, strings.Join(want, " "), time.Since(start).Round(time.Millisecond), indent(out))
	waitFor(r, 20*time.Second, "the router's kernel route follows BIRD", func() bool {
		out, _ := s.router.Cmd("ip", "route", "show", vipRange).CombinedOutput()
		return len(want) == 1 && !strings.Contains(string(out), "nexthop") && strings.Contains(string(out), want[0]) ||
			strings.Count(string(out), "nexthop via") == len(want)
	})
	kout, _ := s.router.Cmd("ip", "route", "show", vipRange).CombinedOutput()
	say("   the router's kernel (`ip route show %s`):\n%s", vipRange, indent(string(kout)))
}

// killMidTransfer starts HTTPS downloads through the VIP and Envoy,
// makes director1 die as a powered-off node would (every packet dropped,
// tlb SIGKILLed) while some of them pass through it, and shows every
// download finishing intact.
func killMidTransfer(ctx context.Context, r *runner, s *site, say func(string, ...any)) error {
	url := fmt.Sprintf("https://%s/download?size=%d", gatewaylab.MediaHost, downloadSize)
	say("\n== 8. Losing a director mid-transfer: %d downloads of %d MB each from %s", downloads, downloadSize>>20, url)
	say("   (TLS ends at Envoy on the gateways; Envoy fetches them from the backends)")
	client := gatewaylab.Client(s.client, vip+":443", s.l7.CA, false)
	client.Timeout = 3 * time.Minute
	var flows gatewaylab.Flows
	flows.Track(client)
	results := make([]gatewaylab.Download, downloads)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range downloads {
		wg.Go(func() { results[i] = gatewaylab.Fetch(ctx, client, url, downloadSize) })
	}
	var per [2]int
	waitFor(r, 30*time.Second, "downloads in flight through "+s.directors[0].Name, func() bool {
		per = [2]int{established(s, 0, &flows), established(s, 1, &flows)}
		return per[0] > 0
	})
	say("   downloads in flight per director (IPVS ESTABLISHED entries): %s %d, %s %d",
		s.directors[0].Name, per[0], s.directors[1].Name, per[1])
	time.Sleep(time.Second)

	say("   %s loses power: every packet in and out dropped, tlb SIGKILLed (no BGP goodbye)", s.directors[0].Name)
	s.directors[0].Run(r, "nft", "add table inet dead; "+
		"add chain inet dead drop_input { type filter hook input priority -300; policy drop; }; "+
		"add chain inet dead drop_output { type filter hook output priority -300; policy drop; }")
	killAt := time.Now()
	_ = s.tlb[0].Process.Signal(syscall.SIGKILL)
	_, took, err := s.bird.WaitRoutes(ctx, vipRange, 30*time.Second, func(rs []birdlab.Route) bool {
		return len(rs) == 1 && rs[0].NextHop == s.directorAddr[1]
	})
	if err != nil {
		return fmt.Errorf("BIRD never dropped the dead director: %w", err)
	}
	say("   BIRD dropped %s %v after the loss (hold timer 3 s, counted from its last keepalive)", s.directors[0].Name, took.Round(100*time.Millisecond))
	showRoutes(ctx, r, s, say, s.directorAddr[1:])

	wg.Wait()
	say("   the downloads, %v after they started (%v after the loss):", time.Since(start).Round(100*time.Millisecond), time.Since(killAt).Round(100*time.Millisecond))
	failed := 0
	for i, res := range results {
		state := "complete, every byte as sent"
		if res.Err != nil {
			state = "FAILED: " + res.Err.Error()
			failed++
		}
		who := "?"
		if a, err := gatewaylab.ParseAnswer(res.Answer); err == nil {
			who = a.Backend + " through " + s.gatewayName(a.Gateway)
		}
		say("     download %2d: %d of %d bytes from %s, %s", i+1, res.Bytes, downloadSize, who, state)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d downloads broke when %s died", failed, downloads, s.directors[0].Name)
	}
	say("   all %d finished: %s had the same Maglev table and took over the flows (sloppy_tcp),", downloads, s.directors[1].Name)
	say("   and the gateways' replies never went through a director anyway (direct server return)")
	return nil
}

// established counts director i's ESTABLISHED IPVS entries for
// VIP:443 that are flows of the downloads.
func established(s *site, i int, flows *gatewaylab.Flows) int {
	out, _ := s.directors[i].Cmd("ipvsadm", "-Lnc").CombinedOutput()
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		// TCP 14:59  ESTABLISHED 198.18.0.2:51754 203.0.113.10:443 198.18.12.2:443
		f := strings.Fields(line)
		if len(f) >= 6 && f[2] == "ESTABLISHED" && f[4] == vip+":443" && flows.Has(f[3]) {
			n++
		}
	}
	return n
}
