// Package poll waits in tests for a condition that the system reaches on
// its own time (a VIP in a Service's status, a route in BIRD, an IPVS
// counter): it checks every 100ms and fails the test with what it waited
// for when the time is up. It owns nothing and keeps no state.
package poll

import "time"

// Interval is the pause between two checks.
const Interval = 100 * time.Millisecond

// T is what a wait needs from its caller; testing.TB satisfies it.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Until checks ok until it returns true; after within it fails t with
// "timed out after <within> waiting until <what>".
func Until(t T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	Explained(t, within, what, func() (bool, string) { return ok(), "" })
}

// Explained is Until for a condition that says why it does not hold yet:
// the last reason is in the failure.
func Explained(t T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if !time.Now().Before(deadline) {
			if why != "" {
				t.Fatalf("timed out after %s waiting until %s: %s", within, what, why)
			} else {
				t.Fatalf("timed out after %s waiting until %s", within, what)
			}
			return
		}
		time.Sleep(Interval)
	}
}
