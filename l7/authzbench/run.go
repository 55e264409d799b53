package authzbench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tlbproject/tlb/internal/benchchild"
	"github.com/tlbproject/tlb/l7/authz/chain"
)

// Options shape a run.
type Options struct {
	Streams  int           // Check calls in flight (64)
	Conns    int           // client connections carrying them
	Sessions int           // sessions in Redis
	Warmup   time.Duration // not measured
	Duration time.Duration // measured, per run
}

// Figures are both runs' results.
type Figures struct {
	Floor    Result // an empty chain: gRPC and protobuf only
	Builtin  Result // session + CSRF
	External Result // session + CSRF + one external gRPC interceptor
	// LoadAvg is /proc/loadavg before the runs: other work on the machine.
	LoadAvg string
}

// Goals of issue 11 for the built-ins.
const (
	GoalChecksPerS = 30000
	GoalP99Ms      = 2.0
)

// Measure starts the service child (self with childArgs) and runs both
// loads against it.
func Measure(ctx context.Context, self string, childArgs []string, o Options) (Figures, error) {
	c, err := benchchild.Start(ctx, self, childArgs)
	if err != nil {
		return Figures{}, err
	}
	defer func() { _ = c.Stop() }()
	addrs, err := c.ReadLine("addrs")
	if err != nil || len(addrs) != 3 {
		return Figures{}, fmt.Errorf("the service child did not start (said %q): %w", addrs, err)
	}
	authzAddr, extAddr := addrs[1], addrs[2]
	builtins := chain.Chain{{Type: chain.TypeSession}, {Type: chain.TypeCSRF}}
	withExt := slices.Concat(builtins, chain.Chain{{Type: chain.TypeExternal, ID: "bench",
		Transport: chain.TransportGRPC, Address: extAddr, Parameters: map[string]string{"method": "authorize_create"}}})
	var f Figures
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f.LoadAvg = strings.TrimSpace(string(b))
	}
	for _, run := range []struct {
		c   chain.Chain
		out *Result
	}{{chain.Chain{}, &f.Floor}, {builtins, &f.Builtin}, {withExt, &f.External}} {
		value, err := chain.Encode(run.c)
		if err != nil {
			return f, err
		}
		cpu0, err := c.CPU()
		if err != nil {
			return f, err
		}
		if *run.out, err = load(ctx, authzAddr, value, o.Streams, o.Conns, o.Sessions, o.Warmup, o.Duration); err != nil {
			return f, err
		}
		cpu1, err := c.CPU()
		if err != nil {
			return f, err
		}
		run.out.ServiceCPUPerCheck = (cpu1 - cpu0) / time.Duration(run.out.All)
	}
	return f, nil
}

// Report prints the figures beside the goals, then the BENCH lines.
func Report(w io.Writer, o Options, f Figures) {
	p := func(format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
	p("\nL7 authorization service: ext_authz Check over gRPC on loopback, %d calls in flight on %d connections, %d sessions in Redis, %s measured after %s warmup\n",
		o.Streams, o.Conns, o.Sessions, o.Duration, o.Warmup)
	p("%-36s %-10s %-8s %-8s %-8s %-12s %-16s %s\n", "chain", "checks/s", "failed", "p50_ms", "p99_ms", "svc_cpu_us", "svc_checks/core", "goal")
	for _, row := range []struct {
		name string
		r    Result
		goal string
	}{
		{"empty chain (gRPC + protobuf floor)", f.Floor, "(none; what every check costs before interceptors)"},
		{"session + csrf", f.Builtin, fmt.Sprintf(">= %d checks/s, p99 < %.0f ms", GoalChecksPerS, GoalP99Ms)},
		{"session + csrf + external (gRPC)", f.External, "(none; one more gRPC hop)"},
	} {
		p("%-36s %-10.0f %-8d %-8.2f %-8.2f %-12.1f %-16.0f %s\n", row.name, row.r.PerSecond, row.r.Failed, row.r.P50Ms, row.r.P99Ms,
			float64(row.r.ServiceCPUPerCheck)/float64(time.Microsecond), row.r.perCore(), row.goal)
	}
	p("this run: the client (this process), the service child, its redis-server and the external interceptor share the machine (%d CPUs, load average before the run %s);\n", runtime.NumCPU(), f.LoadAvg)
	p("svc_cpu_us is the service child's CPU time (user+sys, without Redis; with the external run, the external interceptor's too) per check,\n")
	p("svc_checks/core what one core of it would answer; failed are checks answered 503 (an interceptor over its 200 ms timeout); p99 is nearest-rank over every measured call\n")
	p("with %d calls always in flight the mean latency is %d / rate (Little's law), so a p99 under %.0f ms needs more than %.0f checks/s;\n",
		o.Streams, o.Streams, GoalP99Ms, float64(o.Streams)/(GoalP99Ms/1000))
	p("the empty chain's rate is the ceiling of gRPC alone with the client on the same cores\n\n")
	p("BENCH authz_checks_per_s %.0f checks/s (goal >= %d)\n", f.Builtin.PerSecond, GoalChecksPerS)
	p("BENCH authz_p99_ms %.2f ms (goal < %.0f)\n", f.Builtin.P99Ms, GoalP99Ms)
	p("BENCH authz_external_checks_per_s %.0f checks/s\n", f.External.PerSecond)
	p("BENCH authz_external_p99_ms %.2f ms\n", f.External.P99Ms)
	p("BENCH authz_failed_checks %d checks (of %d)\n", f.Builtin.Failed+f.External.Failed, f.Builtin.Checks+f.External.Checks)
	p("BENCH authz_service_cpu_us_per_check %.1f us\n", float64(f.Builtin.ServiceCPUPerCheck)/float64(time.Microsecond))
	p("BENCH authz_floor_cpu_us_per_check %.1f us\n", float64(f.Floor.ServiceCPUPerCheck)/float64(time.Microsecond))
}
