// Package gcpercent sets the garbage collector target of the l7
// processes that build xDS resources (l7 serve, the benchmark's server).
package gcpercent

import (
	"os"
	"runtime/debug"
)

// Default is the garbage collector target of "l7 serve": the
// control plane's live heap is small next to the garbage one publish
// makes (a new resolved model, route tables, snapshot wrappers and version
// maps for every resource), so Go's default of 100 lets the peak resident
// set reach about three times the live heap. 75 keeps the per-group
// server's peak under 300 MiB at 10,000 services for a few percent more
// CPU (make bench-l7; docs/l7.md, "Benchmark").
const Default = 75

// Set applies percent unless the operator set GOGC, which wins.
// It returns the value in force.
func Set(percent int) int {
	if v, ok := os.LookupEnv("GOGC"); ok && v != "" {
		old := debug.SetGCPercent(100)
		debug.SetGCPercent(old)
		return old
	}
	debug.SetGCPercent(percent)
	return percent
}
