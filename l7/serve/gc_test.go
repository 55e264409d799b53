package serve

import (
	"runtime/debug"
	"testing"
)

// TestSetGCPercent: the default applies, GOGC set by the operator wins.
func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	if got := SetGCPercent(60); got != 60 || debug.SetGCPercent(60) != 60 {
		t.Fatalf("applied %d", got)
	}
	t.Setenv("GOGC", "200")
	debug.SetGCPercent(200) // as the runtime does at start with GOGC=200
	if got := SetGCPercent(60); got != 200 || debug.SetGCPercent(200) != 200 {
		t.Fatalf("GOGC did not win: %d", got)
	}
}
