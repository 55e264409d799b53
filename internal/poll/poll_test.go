package poll

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a T that records the failure instead of stopping.
type recorder struct{ failed string }

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestUntil(t *testing.T) {
	n := 0
	r := &recorder{}
	Until(r, time.Second, "three checks", func() bool { n++; return n == 3 })
	if r.failed != "" || n != 3 {
		t.Errorf("reached after %d checks, failure %q; want 3 checks and no failure", n, r.failed)
	}

	r = &recorder{}
	begin := time.Now()
	Until(r, 250*time.Millisecond, "never", func() bool { return false })
	if !strings.Contains(r.failed, "timed out after 250ms waiting until never") {
		t.Errorf("failure %q", r.failed)
	}
	if d := time.Since(begin); d < 250*time.Millisecond {
		t.Errorf("gave up after %s, before the 250ms it was given", d)
	}
}

func TestExplainedReportsTheLastReason(t *testing.T) {
	r := &recorder{}
	n := 0
	Explained(r, 150*time.Millisecond, "the VIP is bound", func() (bool, string) {
		n++
		return false, fmt.Sprintf("check %d: not yet", n)
	})
	want := fmt.Sprintf("waiting until the VIP is bound: check %d: not yet", n)
	if n < 2 || !strings.HasSuffix(r.failed, want) {
		t.Errorf("after %d checks failure %q; want it to end %q", n, r.failed, want)
	}
}
