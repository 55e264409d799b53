package gatewayconformance

import (
	"fmt"
	"io"
	"strings"

	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
)

// Outcome is what became of one conformance test in a run.
type Outcome int

// The outcomes a run tells apart.
const (
	// NotClaimed: the test exercises a feature TLB does not claim; the
	// suite does not run it and no figure counts it.
	NotClaimed Outcome = iota
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
	Passed, Failed, SkippedBySuite, NotClaimed int
}

// Tally counts outcomes.
func Tally(outcomes map[string]Outcome) Figures {
	var f Figures
	for _, o := range outcomes {
		switch o {
		case Passed:
			f.Passed++
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

// WriteBench prints the BENCH lines of the whole run.
func (f Figures) WriteBench(w io.Writer) error {
	_, err := fmt.Fprintf(w, "BENCH gateway_api_conformance_passed %d\nBENCH gateway_api_conformance_skipped %d\nBENCH gateway_api_conformance_failed %d\n",
		f.Passed, f.SkippedBySuite, f.Failed)
	return err
}

// WriteProfileBench prints, per profile of the suite's report, the core
// and extended tests passed and failed:
//
//	BENCH gateway_api_core_passed_gateway_http 33
//
// A profile without extended results reports 0 extended tests.
func WriteProfileBench(w io.Writer, r *confv1.ConformanceReport) error {
	var b strings.Builder
	for _, p := range r.ProfileReports {
		ext := confv1.Statistics{}
		if p.Extended != nil {
			ext = p.Extended.Statistics
		}
		for _, l := range []struct {
			name string
			n    uint32
		}{
			{"core_passed", p.Core.Passed}, {"core_failed", p.Core.Failed},
			{"extended_passed", ext.Passed}, {"extended_failed", ext.Failed},
		} {
			fmt.Fprintf(&b, "BENCH gateway_api_%s_%s %d\n", l.name, strings.ReplaceAll(strings.ToLower(p.Name), "-", "_"), l.n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
