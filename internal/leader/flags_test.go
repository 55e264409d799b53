package leader

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestFlagsKeepTheOldNamespaceFlag: --lease-namespace, which deployed
// manifests still pass, sets the Lease's namespace as
// --leader-election-namespace does, and Warn says it is deprecated.
func TestFlagsKeepTheOldNamespaceFlag(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "from-env")
	for name, tc := range map[string]struct {
		args     []string
		want     string
		warnings bool
	}{
		"default":      {nil, "from-env", false},
		"current flag": {[]string{"--leader-election-namespace=a"}, "a", false},
		"old flag":     {[]string{"--lease-namespace=b"}, "b", true},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f Flags
		f.Register(fs, "tlb-test")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b bytes.Buffer
		f.Warn(slog.New(slog.NewTextHandler(&b, nil)))
		if f.Namespace != tc.want || strings.Contains(b.String(), "deprecated") != tc.warnings {
			t.Errorf("%s: namespace %q, log %q; want %q, a warning %v", name, f.Namespace, b.String(), tc.want, tc.warnings)
		}
		e := f.Election(nil, nil, "testing", nil)
		if e.Name != "tlb-test" || e.LeaseDuration != 15*time.Second || e.RenewDeadline != 10*time.Second || e.RetryPeriod != 2*time.Second || !f.Elect {
			t.Errorf("%s: election %+v", name, e)
		}
	}
}
