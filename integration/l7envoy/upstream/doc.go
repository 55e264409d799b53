// Package upstream proves the upstream side of the L7 gateway functions
// through a real Envoy: l7 serve translates a DSL directory each test
// writes, the Envoy that tools/deps.sh fetched takes it over ADS
// (integration/envoyproc starts both as deploy/envoy does), and real
// requests go through it to real backends on loopback: TLS to upstreams,
// client certificates on a listener, canary by cookie and by percentage,
// weights and cookie stickiness, active health checks, outlier detection,
// circuit breakers, timeouts and retries, upstreams named by DNS (with a
// DNS server the test controls) and seed 000's own DSL examples, and
// proxyless gRPC clients of the same l7 serve.
//
// The tests run in go test ./... (no build tag) and fail, never skip,
// when Envoy or redis-server is missing. They use 127.0.23.0/24 only:
// VIPs from .10, gateways' node addresses from .100, backends from .200,
// the DNS server on .53:23053 (no root needed); listener ports
// 23000-23999, and seed 000's own 8082 for its backends.
// Only test files besides this one: the package owns nothing else.
package upstream
