package redisproc

import (
	"context"
	"testing"
	"time"
)

// StartForTest starts a private redis-server for the test and stops it at
// the test's end; the test fails, saying how to install Redis, when it
// cannot start.
func StartForTest(t testing.TB) *Redis {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rp, err := Start(ctx, t.TempDir(), 10*time.Second)
	if err != nil {
		t.Fatalf("this test needs a real Redis: %v", err)
	}
	t.Cleanup(rp.Stop)
	return rp
}
