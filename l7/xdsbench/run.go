package xdsbench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/tlbproject/tlb/internal/benchchild"
)

// DefaultStreams is the number of gateway streams of the reference (eBay:
// 32 gateway pods on one control plane).
const DefaultStreams = 32

// Figures are the results for one size.
type Figures struct {
	Services     int
	Streams      int
	Rounds       int
	BuildMs      float64 // first full build and publish
	InitialMs    float64 // until all streams hold the full set
	P50Ms, P99Ms float64 // convergence of a 100-endpoint change
	PublishP50Ms float64 // rebuild + publish part of a round
	PeakRSSMiB   float64
	// Identical is true when a replica started after the rounds, over the
	// config they led to, serves the same resources, versions and bytes.
	Identical bool
}

// heldDigest connects one more gateway to addr, waits for its full set
// and returns the digest of what it holds.
func heldDigest(ctx context.Context, addr string, services int) (string, int, error) {
	g, err := dialGateway(ctx, addr, 99, services)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = g.cc.Close() }()
	select {
	case <-g.synced:
	case err := <-g.err:
		return "", 0, err
	case <-time.After(5 * time.Minute):
		return "", 0, fmt.Errorf("sync of the digest gateway timed out")
	}
	d, n := g.digest()
	return d, n, nil
}

// Measure runs one size: it starts the server child (self with childArgs),
// connects streams gateways and runs rounds.
func Measure(ctx context.Context, self string, childArgs []string, services, streams, rounds int) (Figures, error) {
	f := Figures{Services: services, Streams: streams, Rounds: rounds}
	c, err := benchchild.Start(ctx, self, childArgs)
	if err != nil {
		return f, err
	}
	defer func() { _ = c.Stop() }()
	ready, err := c.ReadLine("ready")
	if err != nil {
		return f, err
	}
	addr := ready[1]
	f.BuildMs, _ = strconv.ParseFloat(ready[2], 64)

	start := time.Now()
	gws, err := connectGateways(ctx, addr, streams, services)
	defer func() {
		for _, g := range gws {
			_ = g.cc.Close()
		}
	}()
	if err != nil {
		return f, err
	}
	f.InitialMs = ms(time.Since(start))

	var conv, pub []float64
	for k := 1; k <= rounds; k++ {
		cv, p, err := runRound(c, gws, k)
		if err != nil {
			return f, err
		}
		conv, pub = append(conv, cv), append(pub, p)
	}
	f.P50Ms, f.P99Ms, f.PublishP50Ms = percentile(conv, 50), percentile(conv, 99), percentile(pub, 50)
	if f.PeakRSSMiB, err = peakRSS(c); err != nil {
		return f, err
	}
	f.Identical, err = sameAsReplica(ctx, self, childArgs, addr, services, rounds)
	return f, err
}

// connectGateways dials streams gateways to addr and waits until each
// holds the full set of services. It returns the gateways dialled, for
// the caller to close, also on error.
func connectGateways(ctx context.Context, addr string, streams, services int) ([]*gateway, error) {
	gws := make([]*gateway, 0, streams)
	for i := range streams {
		g, err := dialGateway(ctx, addr, i, services)
		if err != nil {
			return gws, err
		}
		gws = append(gws, g)
	}
	for _, g := range gws {
		select {
		case <-g.synced:
		case err := <-g.err:
			return gws, fmt.Errorf("initial sync: %w", err)
		case <-time.After(5 * time.Minute):
			return gws, fmt.Errorf("initial sync of %d services timed out", services)
		}
	}
	return gws, nil
}

// runRound asks the server child c for change k and returns the time
// until the last gateway received and ACKed it, and the server's
// rebuild and publish time, in milliseconds.
func runRound(c *benchchild.Child, gws []*gateway, k int) (converged, published float64, err error) {
	for _, g := range gws {
		g.startRound(k)
	}
	t0 := time.Now()
	if _, err := fmt.Fprintf(c.Stdin(), "round %d\n", k); err != nil {
		return 0, 0, err
	}
	var last time.Time
	for _, g := range gws {
		select {
		case t := <-g.done:
			if t.After(last) {
				last = t
			}
		case err := <-g.err:
			return 0, 0, fmt.Errorf("round %d: %w", k, err)
		case <-time.After(2 * time.Minute):
			return 0, 0, fmt.Errorf("round %d timed out", k)
		}
	}
	converged = ms(last.Sub(t0))
	p, err := c.ReadLine("published")
	if err != nil {
		return 0, 0, err
	}
	published, _ = strconv.ParseFloat(p[2], 64)
	return converged, published, nil
}

// peakRSS asks the server child c for its peak resident set, in MiB.
func peakRSS(c *benchchild.Child) (float64, error) {
	if _, err := io.WriteString(c.Stdin(), "stats\n"); err != nil {
		return 0, err
	}
	h, err := c.ReadLine("hwm")
	if err != nil {
		return 0, err
	}
	kib, _ := strconv.Atoi(h[1])
	return float64(kib) / 1024, nil
}

// sameAsReplica reports whether a replica started now over the inputs
// the rounds led to serves the same resources, versions and bytes as the
// server at addr.
func sameAsReplica(ctx context.Context, self string, childArgs []string, addr string, services, rounds int) (bool, error) {
	d1, n1, err := heldDigest(ctx, addr, services)
	if err != nil {
		return false, fmt.Errorf("digest of the running server: %w", err)
	}
	c2, err := benchchild.Start(ctx, self, append(slices.Clone(childArgs), "-apply-rounds", strconv.Itoa(rounds)))
	if err != nil {
		return false, err
	}
	defer func() { _ = c2.Stop() }()
	r2, err := c2.ReadLine("ready")
	if err != nil {
		return false, err
	}
	d2, n2, err := heldDigest(ctx, r2[1], services)
	if err != nil {
		return false, fmt.Errorf("digest of the second replica: %w", err)
	}
	return d1 == d2 && n1 == n2 && n1 > 0, nil
}

// percentile is nearest-rank.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Report prints the figures beside the reference and the BENCH lines.
func Report(w io.Writer, figs []Figures) {
	p := func(format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
	p("\nL7 xDS convergence: %d-endpoint change, all gateway streams received and ACKed (delta ADS, gRPC on loopback)\n", Changed)
	p("%-9s %-8s %-7s %-10s %-10s %-11s %-12s %-11s %-9s\n", "services", "streams", "rounds", "p50_ms", "p99_ms", "publish_ms", "initial_ms", "build_ms", "rss_MiB")
	for _, f := range figs {
		p("%-9d %-8d %-7d %-10.1f %-10.1f %-11.1f %-12.1f %-11.1f %-9.1f\n", f.Services, f.Streams, f.Rounds, f.P50Ms, f.P99Ms, f.PublishP50Ms, f.InitialMs, f.BuildMs, f.PeakRSSMiB)
	}
	p("reference (eBay, Istio): p99 5000 ms at 2000 services, 32 gateway pods, 100 endpoints changing, 1 istiod on a 32-CPU control plane\n")
	p("this run: server and clients share the machine (%d CPUs); p99 is nearest-rank over the rounds; a gateway pod's l7 serves 1 stream (its own Envoy)\n\n", cpus())
	for _, f := range figs {
		n := fmt.Sprint(f.Services)
		if f.Streams != DefaultStreams {
			n += fmt.Sprintf("_streams%d", f.Streams)
		}
		p("BENCH xds_p50_convergence_ms_%s %.1f ms\n", n, f.P50Ms)
		p("BENCH xds_p99_convergence_ms_%s %.1f ms\n", n, f.P99Ms)
		p("BENCH xds_publish_p50_ms_%s %.1f ms\n", n, f.PublishP50Ms)
		p("BENCH xds_full_build_ms_%s %.1f ms\n", n, f.BuildMs)
		p("BENCH xds_initial_sync_ms_%s %.1f ms\n", n, f.InitialMs)
		p("BENCH xds_peak_rss_mib_%s %.1f MiB\n", n, f.PeakRSSMiB)
		identical := 0
		if f.Identical {
			identical = 1
		}
		p("BENCH xds_identical_across_replicas_%s %d bool\n", n, identical)
		if f.Services == 10000 && f.Streams == DefaultStreams {
			p("BENCH xds_identical_across_replicas %d bool\n", identical)
		}
	}
}
