// Package edge proves the gateway functions of the DSL ("Gateway
// functions" in docs/l7.md) with real requests through the real Envoy:
// TLS termination, JWT and roles, CORS, error pages and header rules,
// HSTS, redirects, maintenance and direct responses, WebSockets, the
// access log and trace headers, and the limits Envoy puts on what we
// emit (regex program size, direct response bodies).
//
// Each test writes a DSL directory, starts "l7 serve" and Envoy with
// integration/envoyproc (as deploy/envoy starts them) on loopback
// addresses of 127.0.21.0/24, and sends its table of requests. Tests fail,
// never skip, when Envoy is missing (tools/deps.sh fetches it). The
// package owns the processes, backends and directories it starts, and
// nothing else.
package edge
