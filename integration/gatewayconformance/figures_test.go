package gatewayconformance

import (
	"bytes"
	"testing"
)

func TestTallyAndBenchLines(t *testing.T) {
	f := Tally(map[string]Outcome{
		"A": Passed, "B": Passed, "C": Failed, "D": SkippedDataPlane,
		"E": NotClaimed, "F": SkippedBySuite, "G": SkippedDataPlane, "H": SkippedDataPlane,
	})
	want := Figures{Passed: 2, SkippedDataPlane: 3, Failed: 1, SkippedBySuite: 1, NotClaimed: 1}
	if f != want {
		t.Fatalf("Tally = %+v, want %+v", f, want)
	}
	var b bytes.Buffer
	if err := f.WriteBench(&b); err != nil {
		t.Fatal(err)
	}
	const lines = "BENCH gateway_api_conformance_passed 2\nBENCH gateway_api_conformance_skipped_data_plane 3\nBENCH gateway_api_conformance_failed 1\n"
	if b.String() != lines {
		t.Errorf("bench lines:\n%s\nwant:\n%s", b.String(), lines)
	}
}
