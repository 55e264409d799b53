package birdlab

import "context"

// TB is what StartForTest needs from a test; testing.TB satisfies it.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Failed() bool
	Cleanup(func())
	TempDir() string
}

// StartForTest starts BIRD in network namespace netns for the length of a
// test: it fails the test if BIRD does not start, and stops it at the
// end, printing its log when the test failed.
func StartForTest(t TB, netns string, cfg RouterConfig) *Router {
	t.Helper()
	r, err := StartRouter(context.Background(), netns, t.TempDir(), cfg)
	if err != nil {
		t.Fatalf("start bird in %s: %v", netns, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bird log:\n%s", r.Log())
		}
		r.Stop()
	})
	return r
}
