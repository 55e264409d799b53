package envoybench

import (
	"context"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Figures are a run's results.
type Figures struct {
	Throughput  Throughput
	XDS         XDSAcks
	Propagation Propagation
	Churn       Churn
	// LoadAvg is /proc/loadavg before the run: other work on the machine.
	LoadAvg string
	CPUs    int
	// BackendRequests are the requests the backend answered.
	BackendRequests int64
}

// Run runs every measurement, one gateway at a time.
func Run(ctx context.Context, o Options) (f Figures, err error) {
	f = Figures{CPUs: runtime.NumCPU()}
	if err := o.check(); err != nil {
		return f, err
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f.LoadAvg = strings.TrimSpace(string(b))
	}
	backendIP := o.addr(backendAddr).String()
	backends := []string{net.JoinHostPort(backendIP, strconv.Itoa(o.Port+1)), net.JoinHostPort(backendIP, strconv.Itoa(o.Port+2))}
	b, err := startBackend(backends...)
	if err != nil {
		return f, err
	}
	defer b.stop()
	defer func() { f.BackendRequests = b.requests.Load() }()
	if o.runs(MeasureThroughput) {
		if f.Throughput, err = measureThroughput(ctx, o, backends[0]); err != nil {
			return f, err
		}
	}
	if o.runs(MeasureXDSAcks) {
		if f.XDS, err = measureXDSAcks(ctx, o, backends); err != nil {
			return f, err
		}
	}
	if o.runs(MeasurePropagation) {
		if f.Propagation, f.Churn, err = measurePropagation(ctx, o, backends[0]); err != nil {
			return f, err
		}
	}
	return f, nil
}
