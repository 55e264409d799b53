//go:build lab

package bgp_test

import "testing"

// tlog writes log lines into the test log.
type tlog struct{ t *testing.T }

func (w tlog) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }
