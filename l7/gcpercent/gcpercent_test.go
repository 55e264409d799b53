package gcpercent

import (
	"runtime/debug"
	"testing"
)

// TestSet: the default applies, GOGC set by the operator wins.
func TestSet(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	if got := Set(60); got != 60 || debug.SetGCPercent(60) != 60 {
		t.Fatalf("applied %d", got)
	}
	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200) // as the runtime does at start with GOGC=200
	if got := Set(60); got != 200 || debug.SetGCPercent(200) != 200 {
		t.Fatalf("GOGC did not win: %d", got)
	}
}
