// Package envoybench measures the real Envoy gateway (make bench-envoy,
// issue 21 item 6): l7 serve and Envoy started by integration/envoyproc
// exactly as deploy/envoy starts them, a minimal Go HTTP backend on
// loopback, wrk as the load generator, sessions in a real redis-server.
//
// It measures, in one run on one machine where client, Envoy, l7, Redis
// and the backend share the cores:
//   - requests per second through one route without any filter, then with
//     a valid HS256 token checked on every request (jwt_authn), then with
//     the session and CSRF interceptors checked by l7's authorization
//     service over ext_authz, as ratios to the first;
//   - with 10,000 services served, the time from l7's publication of an
//     endpoint change to Envoy's ACK of it (l7's ACK tracking);
//   - with 3,000 routes served, the time from a new route's DSL file
//     appearing to its first 200 through Envoy;
//   - requests to unchanged routes answered non-2xx while routes are added
//     and removed under load.
//
// It owns the processes it starts, the directory it is given and the
// loopback addresses of Options.Net; nothing else.
package envoybench
