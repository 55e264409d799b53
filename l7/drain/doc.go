// Package drain stops an Envoy gateway without cutting connections: it
// fails Envoy's health check (so the L4 tier stops sending new
// connections), keeps serving while the L4 tier notices, starts a graceful
// listener drain through the admin API, and waits until no client
// connection is open and none has come for a quiet period, or a deadline;
// the Supervisor then stops the Envoy process it started.
//
// It talks only to the admin address it is given (loopback or a unix
// socket) and signals only the process it started. Its logic is tested
// against an HTTP stand-in of Envoy's admin endpoints; the real Envoy
// behind real directors is drained in integration/director
// (TestMissionThroughEnvoy).
package drain
