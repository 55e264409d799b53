package loadloop

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCountsEveryRequestAndKeepsFailures: every request is counted, the
// failing ones kept with their error, and nothing runs after Stop.
func TestCountsEveryRequestAndKeepsFailures(t *testing.T) {
	var calls atomic.Int64
	enough := make(chan struct{})
	l := Start(func() error {
		n := calls.Add(1)
		if n == 100 {
			close(enough)
		}
		if n%10 == 0 {
			return errors.New("refused")
		}
		return nil
	})
	<-enough
	l.Stop()
	l.Stop()
	sent, failures := l.Counts()
	if int64(sent) != calls.Load() || sent < 100 {
		t.Errorf("sent %d, request called %d times; want equal and at least 100", sent, calls.Load())
	}
	if len(failures) != sent/10 {
		t.Fatalf("%d failures, want %d", len(failures), sent/10)
	}
	if !strings.HasSuffix(failures[0], ": refused") {
		t.Errorf("failure %q, want it to end in the error", failures[0])
	}
	if after := calls.Load(); after != int64(l.Sent()) {
		t.Errorf("request called %d times, %d counted: a call after Stop", after, l.Sent())
	}
}
