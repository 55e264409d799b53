package kubetest

import (
	"context"
	"testing"
	"time"
)

// Models records the models a running Source emits. Build it with
// RunSource.
type Models[T any] struct {
	t  testing.TB
	ch chan T
}

// RunSource runs run (a Source's Run method) on its own goroutine with the
// test's context and records what it emits (up to 10 models not yet read
// before run blocks). When the test ends, run is cancelled and waited for;
// an error from it fails the test.
func RunSource[T any](t testing.TB, run func(context.Context, func(T)) error) *Models[T] {
	m := &Models[T]{t: t, ch: make(chan T, 10)}
	done := make(chan error, 1)
	go func() { done <- run(t.Context(), func(v T) { m.ch <- v }) }()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return m
}

// Next returns the next model emitted, failing the test if none comes
// within 10 seconds; what says what should have caused it.
func (m *Models[T]) Next(what string) T {
	m.t.Helper()
	select {
	case v := <-m.ch:
		return v
	case <-time.After(10 * time.Second):
		m.t.Fatalf("no model emitted: %s", what)
	}
	var zero T
	return zero
}

// Quiet fails the test if a model is emitted within half a second; what
// says what should not have caused one.
func (m *Models[T]) Quiet(what string) {
	m.t.Helper()
	select {
	case v := <-m.ch:
		m.t.Fatalf("%s: unexpected model emitted: %+v", what, v)
	case <-time.After(500 * time.Millisecond):
	}
}
