package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tlbproject/tlb/bgp/birdlab"
)

// A download is downloadSize bytes of a known pattern, paced so that it
// lasts several seconds: long enough to lose a director in the middle.
const (
	downloadSize  = 4 << 20
	downloadChunk = 32 << 10
	downloadPace  = 25 * time.Millisecond // per chunk: ~1.3 MB/s, ~3 s per download
	downloads     = 10
)

// pattern is the byte at offset i of every download.
func pattern(i int) byte { return byte(i*7 + i/251) }

// download writes one paced download.
func download(w http.ResponseWriter) {
	w.Header().Set("Content-Length", strconv.Itoa(downloadSize))
	buf := make([]byte, downloadChunk)
	fl, _ := w.(http.Flusher)
	for off := 0; off < downloadSize; off += downloadChunk {
		for i := range buf {
			buf[i] = pattern(off + i)
		}
		if _, err := w.Write(buf); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
		time.Sleep(downloadPace)
	}
}

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

type result struct {
	n   int
	err error
}

// killMidTransfer starts downloads through the VIP, makes director1 die
// as a powered-off node would (every packet dropped, tlb SIGKILLed) while
// some of them pass through it, and shows every download finishing intact.
func killMidTransfer(ctx context.Context, r *runner, s *site, say func(string, ...any)) error {
	say("\n== 6. Losing a director mid-transfer: %d downloads of %d MB each from http://%s/download", downloads, downloadSize>>20, vip)
	client := s.client.HTTPClient()
	results := make([]result, downloads)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range downloads {
		wg.Go(func() { results[i] = fetch(ctx, client) })
	}
	var per [2]int
	waitFor(r, 30*time.Second, "downloads in flight through "+s.directors[0].Name, func() bool {
		per = [2]int{established(s, 0), established(s, 1)}
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
		if res.err != nil {
			state = "FAILED: " + res.err.Error()
			failed++
		}
		say("     download %d: %d of %d bytes, %s", i+1, res.n, downloadSize, state)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d downloads broke when %s died", failed, downloads, s.directors[0].Name)
	}
	say("   all %d finished: %s had the same Maglev table and took over the flows (sloppy_tcp),", downloads, s.directors[1].Name)
	say("   and the gateways' replies never went through a director anyway (direct server return)")
	return nil
}

// fetch downloads once and checks every byte.
func fetch(ctx context.Context, client *http.Client) result {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+vip+"/download", nil)
	if err != nil {
		return result{err: err}
	}
	client.Timeout = 2 * time.Minute
	resp, err := client.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, err := resp.Body.Read(buf)
		for i := 0; i < k; i++ {
			if buf[i] != pattern(n+i) {
				return result{n: n + i, err: fmt.Errorf("byte %d differs", n+i)}
			}
		}
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return result{n: n, err: err}
		}
	}
	if n != downloadSize {
		return result{n: n, err: fmt.Errorf("short: %d bytes", n)}
	}
	return result{n: n}
}

// established counts director i's ESTABLISHED IPVS entries for the VIP.
func established(s *site, i int) int {
	out, _ := s.directors[i].Cmd("ipvsadm", "-Lnc").CombinedOutput()
	n := 0
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.Contains(line, []byte(vip+":80")) && bytes.Contains(line, []byte("ESTABLISHED")) {
			n++
		}
	}
	return n
}
