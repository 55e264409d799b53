// Package birdlab runs real BIRD 2 routers inside network namespaces, for
// tests and benchmarks that prove what a BGP speaker puts on the wire.
//
// It owns only what it creates: network namespaces named with the prefix
// it is given, the veth links inside them, and the bird processes it
// starts. It never touches the root network namespace: links are created
// directly inside the namespaces (ip -n), and code that must speak from a
// namespace runs as a re-executed child (see Enter).
package birdlab
