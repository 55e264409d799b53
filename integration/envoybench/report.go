package envoybench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// Goals of issue 21, and the public figures it names.
const (
	GoalJWTRatio          = 0.90
	GoalSessionCSRFRatio  = 0.65
	GoalXDSAckP99Ms       = 1000
	GoalPropagationP99Ms  = 100
	GoalNon2xxDuringChurn = 0
)

// percentile is the nearest-rank p-th percentile of xs (0 when empty).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Report prints the figures beside the goals and the public references,
// then the BENCH lines.
func Report(w io.Writer, o Options, f Figures) {
	p := func(format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
	t, x, pr, c := f.Throughput, f.XDS, f.Propagation, f.Churn
	p("\nThe real Envoy (bootstrap and arguments of deploy/envoy/gateway.yaml, default --concurrency: one worker per CPU) and l7 serve, started by integration/envoyproc.\n")
	p("One run on this machine: %d CPUs shared by wrk, Envoy, l7, Redis and the Go backend (load average before the run: %s).\n\n", f.CPUs, f.LoadAvg)

	if o.runs(MeasureThroughput) {
		reportThroughput(p, o, t)
	}
	if o.runs(MeasureXDSAcks) {
		reportXDS(p, x)
	}
	if o.runs(MeasurePropagation) {
		reportPropagation(p, o, pr, c)
	}
	if o.runs(MeasureThroughput) {
		p("BENCH envoy_rps_plain %.0f req/s\n", t.rate(loadPlain))
		p("BENCH envoy_jwt_hs256_ratio %.3f ratio (median of the rounds; goal >= %.2f; seed 001: Envoy 0.80)\n", t.MedianRatio(loadJWT), GoalJWTRatio)
		p("BENCH envoy_session_csrf_ratio %.3f ratio (median of the rounds; goal >= %.2f; seed 001: external auth 0.11, 0.06)\n", t.MedianRatio(loadSession), GoalSessionCSRFRatio)
		p("BENCH envoy_jwt_hs256_cpu_ratio %.3f ratio (CPU per request, plain over JWT)\n", t.CPURatio(loadJWT))
		p("BENCH envoy_session_csrf_cpu_ratio %.3f ratio (CPU per request, plain over session + CSRF)\n", t.CPURatio(loadSession))
		p("BENCH envoy_throughput_failed %d requests\n", t.Failed())
	}
	if o.runs(MeasureXDSAcks) {
		p("BENCH envoy_xds_p99_ack_ms_%d %.0f ms (goal < %d)\n", x.Services, percentile(x.AckMs, 99), GoalXDSAckP99Ms)
	}
	if o.runs(MeasurePropagation) {
		p("BENCH envoy_route_propagation_p99_ms_%d %.0f ms (goal < %d; public: 10-30 best, ~600 Envoy Gateway)\n", pr.Routes, percentile(pr.NoDebounce, 99), GoalPropagationP99Ms)
		p("BENCH envoy_route_propagation_debounced_p99_ms_%d %.0f ms (l7 --debounce %v as deployed)\n", pr.Routes, percentile(pr.Debounced, 99), deployedDebounce)
		p("BENCH envoy_non2xx_during_churn %d requests (goal %d; of %d, %d socket errors, %d routes added and %d removed; Envoy Gateway: 14,808)\n",
			c.Load.Non2xx, GoalNon2xxDuringChurn, c.Load.Requests, c.Load.SocketErrors, c.Added, c.Removed)
	}
}

func reportThroughput(p func(string, ...any), o Options, t Throughput) {
	p("Throughput: wrk -t%d -c%d, %s per load after a %s warmup, %d rounds; one listener per load, one route to a Go backend on loopback\n",
		o.Threads, o.Connections, o.Duration, o.Warmup, o.Rounds)
	p("%-14s", "load")
	for i := range o.Rounds {
		p(" %-12s %-8s", fmt.Sprintf("r%d_req/s", i+1), fmt.Sprintf("r%d_ratio", i+1))
	}
	p(" %-10s %-8s %s\n", "failed", "median", "all rounds")
	for _, l := range loads {
		p("%-14s", l)
		var failed int64
		for i, r := range t.Rounds[l] {
			p(" %-12.0f %-8.3f", r.PerSecond, t.RoundRatio(l, i))
			failed += r.Failed()
		}
		p(" %-10d %-8.3f %.3f\n", failed, t.MedianRatio(l), t.Ratio(l))
	}
	p("CPU time per request (us), every measured run: %-8s", "")
	for _, proc := range cpuProcesses {
		p(" %-8s", proc)
	}
	p(" %-8s %s\n", "all", "cpu_ratio")
	for _, l := range loads {
		p("%-14s %-35s", l, "")
		for _, proc := range cpuProcesses {
			p(" %-8.1f", us(t.CPUPerRequest(l, proc)))
		}
		p(" %-8.1f %.3f\n", us(t.CPUPerRequest(l, "")), t.CPURatio(l))
	}
	p("cpu_ratio is plain's CPU per request over the load's, every process counted: the req/s ratio of a machine saturated by these processes alone\n")
	p("jwt_hs256: a valid HS256 token in Authorization, checked by jwt_authn on every request (goal >= %.2f; seed 001, 2 cores, 300 connections: Envoy 0.80, its own gateway 0.85)\n", GoalJWTRatio)
	p("session_csrf: POST with a session cookie (one of %d in Redis) and a same-origin Origin, checked by l7's authorization service over ext_authz (goal >= %.2f; seed 001: gateways calling an external auth service kept 0.11 and 0.06)\n\n",
		o.Sessions, GoalSessionCSRFRatio)
}

func reportXDS(p func(string, ...any), x XDSAcks) {
	p("xDS: %d services served (Envoy ready with all after %.1f s, Envoy RSS %.0f MiB); %d changes of the endpoints of %d services each (DSL files rewritten);\n",
		x.Services, x.StartupS, x.EnvoyRSSMiB, len(x.AckMs), x.ChangeSize)
	p("timed by l7 (tlb_l7_xds_ack_delay_seconds): from the start of the publish that carries the change (l7's build included, its file debounce and directory read not) to Envoy's ACK of it on the delta ADS stream\n")
	p("  p50 %.0f ms, p99 %.0f ms, max %.0f ms (goal p99 < %d ms); of which l7's publish (resolve, translate, validate, swap): p50 %.0f ms, p99 %.0f ms\n\n",
		percentile(x.AckMs, 50), percentile(x.AckMs, 99), slices.Max(append([]float64{0}, x.AckMs...)), GoalXDSAckP99Ms,
		percentile(x.PublishMs, 50), percentile(x.PublishMs, 99))
	if x.Split > 0 {
		p("  %d changes reached Envoy in more than one response (their files straddled l7's debounce): their time is the sum of the responses' delays, an overstatement\n\n", x.Split)
	}
}

func reportPropagation(p func(string, ...any), o Options, pr Propagation, c Churn) {
	p("Route propagation: %d routes served (one service, host and route each); a new service file renamed into l7's DSL directory, timed to its first 200 through Envoy (polled every millisecond)\n", pr.Routes)
	p("  l7 --debounce 0 (reacting at once, as its Kubernetes source does): p50 %.0f ms, p99 %.0f ms over %d routes (goal p99 < %d ms);\n",
		percentile(pr.NoDebounce, 50), percentile(pr.NoDebounce, 99), len(pr.NoDebounce), GoalPropagationP99Ms)
	p("    of which l7's publish (resolve, translate, validate, swap): p50 %.0f ms, p99 %.0f ms; from its start to Envoy's ACK of the route table: p50 %.0f ms, p99 %.0f ms;\n",
		percentile(pr.NoDebouncePublishMs, 50), percentile(pr.NoDebouncePublishMs, 99), percentile(pr.NoDebounceRoutesAckMs, 50), percentile(pr.NoDebounceRoutesAckMs, 99))
	p("    the rest is l7 reading its directory before the publish, and Envoy's first 200 after its ACK\n")
	p("  l7 as deployed (--debounce %v, waiting for a burst of file changes to end): p50 %.0f ms, p99 %.0f ms over %d routes\n",
		deployedDebounce, percentile(pr.Debounced, 50), percentile(pr.Debounced, 99), len(pr.Debounced))
	p("  public figures for the same test: 10-30 ms for the best, about 600 ms for Envoy Gateway\n\n")
	p("Churn: wrk -t%d -c%d on %d unchanged routes for %s while routes were added (each until its first 200) and removed (each until 404), as deployed:\n", o.Threads, o.Connections, c.Hosts, o.ChurnDuration)
	p("  %d requests, %d answered non-2xx, %d socket errors; %d routes added (p50 %.0f ms, p99 %.0f ms to their first 200 under load), %d removed (goal 0 non-2xx; Envoy Gateway showed 14,808 503s in the public test)\n\n",
		c.Load.Requests, c.Load.Non2xx, c.Load.SocketErrors, c.Added, percentile(c.AddedMs, 50), percentile(c.AddedMs, 99), c.Removed)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
