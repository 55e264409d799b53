package envoybench

import "time"

// Throughput is the throughput run's figures: every round of each load,
// and the CPU time each process used during a load's measured runs.
type Throughput struct {
	Rounds map[string][]wrkResult
	CPU    map[string]map[string]time.Duration
}

// The processes whose CPU time a throughput load counts.
var cpuProcesses = []string{"envoy", "l7", "redis", "backend", "wrk"}

// requests is every measured request of a load.
func (t Throughput) requests(load string) int64 {
	var n int64
	for _, r := range t.Rounds[load] {
		n += r.Requests
	}
	return n
}

// CPUPerRequest is a process's CPU time per request of a load ("" for
// all of them).
func (t Throughput) CPUPerRequest(load, process string) time.Duration {
	n := t.requests(load)
	if n == 0 {
		return 0
	}
	var sum time.Duration
	for p, d := range t.CPU[load] {
		if process == "" || p == process {
			sum += d
		}
	}
	return sum / time.Duration(n)
}

// CPURatio is the plain load's CPU time per request over this load's, all
// processes counted: the throughput ratio a machine doing nothing else,
// saturated by these processes, would show. Other work on the machine
// does not move it as it moves the req/s ratio.
func (t Throughput) CPURatio(load string) float64 {
	if c := t.CPUPerRequest(load, ""); c > 0 {
		return float64(t.CPUPerRequest(loadPlain, "")) / float64(c)
	}
	return 0
}

// rate is a load's requests per second over all its rounds.
func (t Throughput) rate(load string) float64 {
	var n int64
	var s float64
	for _, r := range t.Rounds[load] {
		n += r.Requests
		s += r.Seconds
	}
	if s == 0 {
		return 0
	}
	return float64(n) / s
}

// Ratio is a load's rate over the plain rate, over all rounds.
func (t Throughput) Ratio(load string) float64 {
	if p := t.rate(loadPlain); p > 0 {
		return t.rate(load) / p
	}
	return 0
}

// RoundRatio is the ratio within round i alone.
func (t Throughput) RoundRatio(load string, i int) float64 {
	if p := t.Rounds[loadPlain][i].PerSecond; p > 0 {
		return t.Rounds[load][i].PerSecond / p
	}
	return 0
}

// MedianRatio is the median of the rounds' ratios: a round in which
// other work on the machine hit one load and not the other moves it less
// than it moves Ratio.
func (t Throughput) MedianRatio(load string) float64 {
	var rs []float64
	for i := range t.Rounds[load] {
		rs = append(rs, t.RoundRatio(load, i))
	}
	return percentile(rs, 50)
}

// Failed is every request of every load not answered 2xx/3xx.
func (t Throughput) Failed() int64 {
	var n int64
	for _, rs := range t.Rounds {
		for _, r := range rs {
			n += r.Failed()
		}
	}
	return n
}
