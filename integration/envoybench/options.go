package envoybench

import (
	"fmt"
	"io"
	"net/netip"
	"slices"
	"time"
)

// Options shape a run. Full sizes are those of the issue; a smoke run
// (the package's test) uses tiny ones.
type Options struct {
	// Dir holds every gateway's directory, DSL and logs. Keep it short
	// (unix socket paths); required.
	Dir string
	// Net is the first of the loopback addresses the run uses (16 from
	// it), and Port the first of its ports (100 from it).
	Net  netip.Addr
	Port int
	// Progress receives what the run is doing (nil: nothing).
	Progress io.Writer
	// Only, when set, names the measurements to run (Throughput,
	// XDSAcks, Propagation: churn runs with propagation); default all.
	Only []string

	// Throughput: wrk with Connections connections on Threads threads,
	// each measurement Duration after a Warmup run, Rounds times each.
	Connections int
	Threads     int
	Warmup      time.Duration
	Duration    time.Duration
	Rounds      int
	// Sessions is how many sessions Redis holds (the session run cycles
	// through all of them).
	Sessions int

	// XDSServices services are served while XDSChanges changes of
	// XDSChangeSize services' endpoints each are timed.
	XDSServices   int
	XDSChanges    int
	XDSChangeSize int

	// PropagationRoutes routes are served while PropagationSamples new
	// routes are timed to their first 200.
	PropagationRoutes  int
	PropagationSamples int
	// Churn: routes added and removed one after another for ChurnDuration
	// while wrk loads ChurnHosts unchanged routes.
	ChurnDuration time.Duration
	ChurnHosts    int
}

// Full are the sizes of issue 21 (about 5 minutes on 2 cores).
func Full(dir string) Options {
	return Options{Dir: dir, Net: netip.MustParseAddr("127.0.24.1"), Port: 24000,
		Connections: 300, Threads: 2, Warmup: 2 * time.Second, Duration: 8 * time.Second, Rounds: 3,
		Sessions: 10000, XDSServices: 10000, XDSChanges: 20, XDSChangeSize: 100,
		PropagationRoutes: 3000, PropagationSamples: 20, ChurnDuration: 20 * time.Second, ChurnHosts: 100}
}

func (o Options) check() error {
	if o.Dir == "" || !o.Net.Is4() || o.Port <= 0 || o.Connections <= 0 || o.Threads <= 0 || o.Duration <= 0 || o.Rounds <= 0 ||
		o.Sessions <= 0 || o.XDSServices <= 0 || o.XDSChanges <= 0 || o.XDSChangeSize <= 0 || o.XDSChangeSize > o.XDSServices ||
		o.PropagationRoutes <= 0 || o.PropagationSamples <= 0 || o.ChurnDuration <= 0 || o.ChurnHosts <= 0 || o.ChurnHosts > o.PropagationRoutes {
		return fmt.Errorf("envoybench: incomplete options %+v", o)
	}
	return nil
}

// The measurements Options.Only may name.
const (
	MeasureThroughput  = "throughput"
	MeasureXDSAcks     = "xds"
	MeasurePropagation = "propagation"
)

func (o Options) runs(m string) bool { return len(o.Only) == 0 || slices.Contains(o.Only, m) }

// addr is the i-th address of the run's range.
func (o Options) addr(i int) netip.Addr {
	a := o.Net.As4()
	a[3] += byte(i)
	return netip.AddrFrom4(a)
}

// The addresses of a run, as offsets into Options.Net.
const (
	backendAddr     = 0 // the backend (ports Port+1, Port+2)
	throughputHost  = 1 // HOST_IP of the throughput gateway
	throughputVIP   = 2
	propagationHost = 3
	propagationVIP  = 4
	xdsHost         = 5
	xdsVIP          = 6
)

func (o Options) progress(format string, a ...any) {
	if o.Progress != nil {
		_, _ = fmt.Fprintf(o.Progress, time.Now().Format("15:04:05 ")+format+"\n", a...)
	}
}
