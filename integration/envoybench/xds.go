package envoybench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// XDSAcks is the xDS run's figures.
type XDSAcks struct {
	Services, ChangeSize int
	// AckMs are the changes' times, publication to Envoy's ACK.
	AckMs []float64
	// PublishMs are the same changes' publishes: l7's resolve, translate,
	// validate and swap (tlb_l7_push_duration_seconds), the first part
	// of AckMs.
	PublishMs []float64
	// Split counts the changes that reached Envoy in more than one
	// response (their files straddled l7's debounce); their time is the
	// sum of the responses' delays, an overstatement.
	Split int
	// StartupS is the time from starting l7 and Envoy to Envoy ready with
	// every service; EnvoyRSSMiB Envoy's resident memory then.
	StartupS    float64
	EnvoyRSSMiB float64
}

func xdsService(i int, endpoint string) serviceDef {
	return serviceDef{name: fmt.Sprintf("s%05d", i), host: fmt.Sprintf("s%05d.bench", i), listener: "web", endpoints: []string{endpoint}}
}

// measureXDSAcks serves o.XDSServices services, then changes the endpoints
// of o.XDSChangeSize of them at once, o.XDSChanges times, and takes each
// change's time from l7's publication to Envoy's ACK of the endpoints
// (tlb_l7_xds_ack_delay_seconds of ClusterLoadAssignment, one response
// per change).
func measureXDSAcks(ctx context.Context, o Options, backends []string) (XDSAcks, error) {
	f := XDSAcks{Services: o.XDSServices, ChangeSize: o.XDSChangeSize}
	root := filepath.Join(o.Dir, "xds")
	cfg, err := newConfigDir(root)
	if err != nil {
		return f, err
	}
	vip := o.addr(xdsVIP)
	port := o.Port + 80
	if err := cfg.put("gateway.yaml", gatewayYAML(listenerDef{"web", vip, port})); err != nil {
		return f, err
	}
	for i := range o.XDSServices {
		if err := cfg.put(fmt.Sprintf("s%05d.yaml", i), xdsService(i, backends[0]).yaml()); err != nil {
			return f, err
		}
	}
	o.progress("xds: starting l7 and Envoy with %d services", o.XDSServices)
	start := time.Now()
	g, err := startGateway(ctx, root, o.addr(xdsHost), []string{"--config=" + cfg.path}, false)
	if err != nil {
		return f, err
	}
	defer g.Stop()
	addr := net.JoinHostPort(vip.String(), strconv.Itoa(port))
	last := o.XDSServices - 1
	if err := waitStatus(ctx, addr, wrkRequest{"GET", "/", map[string]string{"Host": xdsService(last, "").host}}, 200, 5*time.Minute); err != nil {
		return f, fmt.Errorf("xds gateway: %w\n--- envoy log:\n%s\n--- l7 log:\n%s", err, g.LogTail("envoy", 2000), g.LogTail("l7", 2000))
	}
	f.StartupS = time.Since(start).Seconds()
	f.EnvoyRSSMiB = rssMiB(g.EnvoyCmd.Process.Pid)
	o.progress("xds: %d services served after %.1f s, Envoy RSS %.0f MiB", o.XDSServices, f.StartupS, f.EnvoyRSSMiB)

	state := make([]int, o.XDSServices)
	for k := range o.XDSChanges {
		before, err := readAckDelays(ctx, g.Metrics, edsType)
		if err != nil {
			return f, err
		}
		pushes, err := readPushes(ctx, g.Metrics)
		if err != nil {
			return f, err
		}
		for j := range o.XDSChangeSize {
			i := (k*o.XDSChangeSize + j) % o.XDSServices
			state[i]++
			if err := cfg.put(fmt.Sprintf("s%05d.yaml", i), xdsService(i, backends[state[i]%2]).yaml()); err != nil {
				return f, err
			}
		}
		after, err := waitAck(ctx, g.Metrics, before)
		if err != nil {
			return f, fmt.Errorf("xds change %d: %w\n--- l7 log:\n%s", k+1, err, g.LogTail("l7", 2000))
		}
		if after.count-before.count > 1 {
			// The files straddled l7's debounce (a very loaded machine):
			// the sum of the responses' delays overstates the change's.
			f.Split++
		}
		f.AckMs = append(f.AckMs, (after.sum-before.sum)*1000)
		pushed, err := readPushes(ctx, g.Metrics)
		if err != nil {
			return f, err
		}
		f.PublishMs = append(f.PublishMs, perEvent(pushes, pushed))
	}
	o.progress("xds: %d changes of %d services: p50 %.0f ms, p99 %.0f ms (l7's publish p50 %.0f ms)", o.XDSChanges, o.XDSChangeSize,
		percentile(f.AckMs, 50), percentile(f.AckMs, 99), percentile(f.PublishMs, 50))
	return f, nil
}

// waitAck waits until l7 has seen one more ACK of endpoints than before,
// and then until no further one comes within half a second (a change
// split over two publishes shows). It reads l7's /metrics every 100 ms
// only: the figure is l7's own, and a scrape costs l7 CPU.
func waitAck(ctx context.Context, metrics string, before ackDelays) (ackDelays, error) {
	deadline := time.Now().Add(2 * time.Minute)
	var seen time.Time
	var last ackDelays
	for {
		cur, err := readAckDelays(ctx, metrics, edsType)
		if err != nil {
			return cur, err
		}
		switch {
		case cur.count != last.count:
			last, seen = cur, time.Now()
		case cur.count > before.count && time.Since(seen) > 500*time.Millisecond:
			return cur, nil
		}
		if time.Now().After(deadline) {
			return cur, fmt.Errorf("no ACK of the endpoints within 2 minutes (%v ACKs before, %v now)", before.count, cur.count)
		}
		select {
		case <-ctx.Done():
			return cur, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// rssMiB is a process's resident memory, from /proc.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0
	}
	var size, rss int64
	if _, err := fmt.Sscan(string(b), &size, &rss); err != nil {
		return 0
	}
	return float64(rss*int64(os.Getpagesize())) / (1 << 20)
}
