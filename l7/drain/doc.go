// Package drain stops an Envoy gateway without cutting connections: on
// SIGTERM it fails Envoy's health check (so the L4 tier stops sending new
// connections), starts a graceful listener drain through the admin API,
// waits until the active downstream connections reach zero or a deadline,
// and only then stops the Envoy process.
//
// It talks only to the admin address it is given (loopback) and signals
// only the process it started. It is tested against an HTTP stand-in of
// Envoy's admin endpoints, not a real Envoy (none is available here).
package drain
