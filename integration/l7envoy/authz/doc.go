// Package authz proves the gateway functions that decide whether a
// request may pass, with real requests through a real Envoy (the pinned
// release tools/deps.sh fetches) started as deploy/envoy starts it
// (integration/envoyproc), its l7 serving the authorization service on
// the pod's unix socket and keeping sessions in a real redis-server with a
// password: the session, CSRF and CSP interceptors, external gRPC and REST
// interceptors (test servers of its own), basic auth exactly on its
// routes (seed 000's incident), the local rate limit, and, with the build
// tag ratelimit (make ratelimit-test), the global limit through the real
// envoyproxy/ratelimit service shared by two gateways.
//
// The tests run on the host, on loopback addresses of 127.0.22.0/24. They
// fail, never skip, when Envoy, redis-server or the rate limit service is
// missing (tools/deps.sh, tools/ratelimit/build.sh). They own the
// processes, servers and temporary directories they start.
package authz
