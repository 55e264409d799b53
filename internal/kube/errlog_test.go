package kube

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestObjectErrorLogOncePerStreak: an error is logged when it appears, not
// again while it persists, and again after a build without it.
func TestObjectErrorLogOncePerStreak(t *testing.T) {
	var buf bytes.Buffer
	l := &ObjectErrorLog{Log: slog.New(slog.NewTextHandler(&buf, nil)), Message: "left out"}
	a, b := errors.New("Service team/a: bad"), errors.New("Service team/b: bad")
	for _, step := range []struct {
		name string
		errs []error
		want []string // errors logged by this step
	}{
		{name: "first a", errs: []error{a}, want: []string{a.Error()}},
		{name: "a persists, b appears", errs: []error{a, b}, want: []string{b.Error()}},
		{name: "both persist", errs: []error{b, a}, want: nil},
		{name: "a gone", errs: []error{b}, want: nil},
		{name: "a back", errs: []error{a, b}, want: []string{a.Error()}},
		{name: "none", errs: nil, want: nil},
	} {
		buf.Reset()
		l.Report(step.errs)
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if buf.Len() == 0 {
			lines = nil
		}
		if len(lines) != len(step.want) {
			t.Fatalf("%s: logged %q, want %q", step.name, lines, step.want)
		}
		for i, w := range step.want {
			if !strings.Contains(lines[i], "msg=\"left out\"") || !strings.Contains(lines[i], w) {
				t.Fatalf("%s: line %d = %q, want message and %q", step.name, i, lines[i], w)
			}
		}
	}
}
