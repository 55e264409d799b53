// Package xdsbench measures the xDS server as the eBay article measured
// Istio: N services with 5 endpoints each, 32 gateway streams held by real
// delta ADS clients over gRPC on loopback, 100 endpoints changing at once,
// and the time until all 32 clients have received and ACKed the change.
//
// The server runs in a child process (Child) so its peak RSS (VmHWM) is its
// own; the clients run in the driver (Run). It touches nothing outside
// loopback and the child it starts.
package xdsbench
