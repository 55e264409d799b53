package gatewayconformance

import (
	"fmt"
	"io"
)

// Outcome is what became of one conformance test in a run.
type Outcome int

// The outcomes a run tells apart.
const (
	// NotClaimed: the test exercises a feature TLB does not claim; the
	// suite does not run it and no figure counts it.
	NotClaimed Outcome = iota
	// SkippedDataPlane: the test is on the skip list (it needs a data
	// plane).
	SkippedDataPlane
	// Passed: the test ran and passed.
	Passed
	// Failed: the test ran and failed, or never ran although it should
	// have (the run stopped before it).
	Failed
	// SkippedBySuite: the test ran and skipped itself (a sub-feature the
	// suite found unsupported).
	SkippedBySuite
)

// Figures are the counts of a run.
type Figures struct {
	Passed, SkippedDataPlane, Failed, SkippedBySuite, NotClaimed int
}

// Tally counts outcomes.
func Tally(outcomes map[string]Outcome) Figures {
	var f Figures
	for _, o := range outcomes {
		switch o {
		case Passed:
			f.Passed++
		case SkippedDataPlane:
			f.SkippedDataPlane++
		case Failed:
			f.Failed++
		case SkippedBySuite:
			f.SkippedBySuite++
		default:
			f.NotClaimed++
		}
	}
	return f
}

// WriteBench prints the three BENCH lines make bench-gateway-api reports.
func (f Figures) WriteBench(w io.Writer) error {
	_, err := fmt.Fprintf(w, "BENCH gateway_api_conformance_passed %d\nBENCH gateway_api_conformance_skipped_data_plane %d\nBENCH gateway_api_conformance_failed %d\n",
		f.Passed, f.SkippedDataPlane, f.Failed)
	return err
}
