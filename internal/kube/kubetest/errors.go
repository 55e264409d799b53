package kubetest

import (
	"strings"
	"testing"
)

// ErrorsContain checks the object errors of a model build: exactly
// len(want) errors, the i-th containing want[i]. A count mismatch stops
// the test; a text mismatch is reported and the test goes on.
func ErrorsContain(t testing.TB, errs []error, want []string) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, e := range errs {
		if !strings.Contains(e.Error(), want[i]) {
			t.Errorf("error %d = %q, want it to contain %q", i, e, want[i])
		}
	}
}
