package gatewayconformance

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/gateway-api/conformance/tests"
)

var update = flag.Bool("update", false, "rewrite "+SkipListFile+" from the suite's source")

// suiteDir is the directory of the conformance module the build uses.
func suiteDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api/conformance").Output()
	if err != nil {
		t.Fatalf("find the conformance module: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestSkipListIsTheDataPlaneTests: the skip list in the repository is
// exactly the suite's tests that reach a traffic helper, no more, no less,
// and the analysis saw every test the suite registers.
func TestSkipListIsTheDataPlaneTests(t *testing.T) {
	dir := suiteDir(t)
	want, total, err := DataPlaneTests(filepath.Join(dir, "tests"), filepath.Join(dir, "tests", "mesh"))
	if err != nil {
		t.Fatal(err)
	}
	if total != len(tests.ConformanceTests) {
		t.Fatalf("the analysis found %d conformance tests, the suite registers %d", total, len(tests.ConformanceTests))
	}
	registered := map[string]bool{}
	for _, ct := range tests.ConformanceTests {
		registered[ct.ShortName] = true
	}
	for name := range want {
		if !registered[name] {
			t.Errorf("data plane test %s is not registered in tests.ConformanceTests", name)
		}
	}
	if *update {
		if err := os.WriteFile(SkipListFile, FormatSkipList(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadSkipList(SkipListFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s differs from the suite's data plane tests (-derived +file); rerun with -update:\n%s", SkipListFile, diff)
	}
}

// TestDataPlaneTestsSeesTraffic: the analysis finds a traffic helper
// reached through a package function and a method, ignores neutral
// helpers, and rejects an unclassified name of a traffic package.
func TestDataPlaneTestsSeesTraffic(t *testing.T) {
	src := map[string]string{"a.go": `package tests

import (
	"net"

	h "sigs.k8s.io/gateway-api/conformance/utils/http"
	"sigs.k8s.io/gateway-api/conformance/utils/kubernetes"
	confsuite "sigs.k8s.io/gateway-api/conformance/utils/suite"
)

var Direct = confsuite.ConformanceTest{ShortName: "Direct", Test: func(t *testing.T, s *confsuite.ConformanceTestSuite) {
	h.MakeRequestAndExpectEventuallyConsistentResponse(t, nil, s.TimeoutConfig, "", h.ExpectedResponse{})
}}

var ViaFunc = confsuite.ConformanceTest{ShortName: "ViaFunc", Test: run}

func run(t *testing.T, s *confsuite.ConformanceTestSuite) { var r runner; r.send() }

type runner struct{}

func (runner) send() { var d net.Dialer; _ = d }

var ViaClient = confsuite.ConformanceTest{ShortName: "ViaClient", Test: func(t *testing.T, s *confsuite.ConformanceTestSuite) {
	_ = s.GRPCClient
}}

var StatusOnly = confsuite.ConformanceTest{ShortName: "StatusOnly", Test: func(t *testing.T, s *confsuite.ConformanceTestSuite) {
	kubernetes.GatewayMustHaveLatestConditions(t, s.Client, s.TimeoutConfig, h.MakeRequest(t, nil, "", "", ""))
}}
`}
	dir := t.TempDir()
	for n, s := range src {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, total, err := DataPlaneTests(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Direct":    "needs a data plane: uses h.MakeRequestAndExpectEventuallyConsistentResponse",
		"ViaFunc":   "needs a data plane: uses net.Dialer",
		"ViaClient": "needs a data plane: uses the suite's GRPCClient",
	}
	if total != 4 {
		t.Errorf("found %d tests, want 4", total)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("data plane tests (-want +got):\n%s", diff)
	}

	bad := `package tests

import (
	"sigs.k8s.io/gateway-api/conformance/utils/tcp"
	confsuite "sigs.k8s.io/gateway-api/conformance/utils/suite"
)

var New = confsuite.ConformanceTest{ShortName: "New", Test: func() { tcp.SomethingNew() }}
`
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := DataPlaneTests(dir); err == nil || !strings.Contains(err.Error(), "tcp.SomethingNew") {
		t.Errorf("an unclassified helper: err = %v, want one naming tcp.SomethingNew", err)
	}
}
