// Package benchchild runs the measured side of a benchmark as a child
// process of the benchmark itself (the command re-run with its own flags),
// so the figures of the measured side (CPU time, peak memory) are its own,
// not the load generator's. The child talks to its parent by lines on its
// standard output and ends when its standard input is closed.
package benchchild
