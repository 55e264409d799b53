package gatewayconformance

import (
	"bytes"
	"testing"

	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
)

func TestTallyAndBenchLines(t *testing.T) {
	f := Tally(map[string]Outcome{
		"A": Passed, "B": Passed, "C": Failed,
		"E": NotClaimed, "F": SkippedBySuite, "G": SkippedBySuite, "H": Passed,
	})
	want := Figures{Passed: 3, Failed: 1, SkippedBySuite: 2, NotClaimed: 1}
	if f != want {
		t.Fatalf("Tally = %+v, want %+v", f, want)
	}
	var b bytes.Buffer
	if err := f.WriteBench(&b); err != nil {
		t.Fatal(err)
	}
	const lines = "BENCH gateway_api_conformance_passed 3\nBENCH gateway_api_conformance_skipped 2\nBENCH gateway_api_conformance_failed 1\n"
	if b.String() != lines {
		t.Errorf("bench lines:\n%s\nwant:\n%s", b.String(), lines)
	}
}

// TestProfileBenchLines: each profile of the suite's report gives its core
// and extended counts; a profile without extended results gives zeros.
func TestProfileBenchLines(t *testing.T) {
	r := &confv1.ConformanceReport{ProfileReports: []confv1.ProfileReport{
		{Name: "GATEWAY-HTTP", Core: confv1.Status{Statistics: confv1.Statistics{Passed: 33, Failed: 1}},
			Extended: &confv1.ExtendedStatus{Status: confv1.Status{Statistics: confv1.Statistics{Passed: 20, Failed: 2}}}},
		{Name: "GATEWAY-TLS", Core: confv1.Status{Statistics: confv1.Statistics{Passed: 5}}},
	}}
	var b bytes.Buffer
	if err := WriteProfileBench(&b, r); err != nil {
		t.Fatal(err)
	}
	const lines = `BENCH gateway_api_core_passed_gateway_http 33
BENCH gateway_api_core_failed_gateway_http 1
BENCH gateway_api_extended_passed_gateway_http 20
BENCH gateway_api_extended_failed_gateway_http 2
BENCH gateway_api_core_passed_gateway_tls 5
BENCH gateway_api_core_failed_gateway_tls 0
BENCH gateway_api_extended_passed_gateway_tls 0
BENCH gateway_api_extended_failed_gateway_tls 0
`
	if b.String() != lines {
		t.Errorf("bench lines:\n%s\nwant:\n%s", b.String(), lines)
	}
}
