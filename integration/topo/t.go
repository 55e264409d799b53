package topo

// T is what a Lab needs from its user: testing.TB satisfies it, and so
// does a program (the demo) that wants a topology outside a test.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Log(args ...any)
	Cleanup(func())
}
