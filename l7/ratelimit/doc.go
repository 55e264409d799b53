// Package ratelimit owns the rate limits of L7 routes as the DSL carries
// them, and what they mean for Envoy and for the rate limit service:
//
//   - a local limit per gateway and per client IP (a token bucket:
//     requestsPerSecond, burst) enforced by Envoy's local_ratelimit HTTP
//     filter, one bucket per client address through a wildcard descriptor;
//   - a global limit shared by every gateway of a group (requests per second,
//     minute or hour, per client IP and/or per route) enforced by Envoy's
//     ratelimit HTTP filter calling the envoyproxy/ratelimit service over
//     gRPC, with the group as the domain;
//   - the configuration of that service, generated from the same limits: the
//     YAML file it loads (the delivery used) and the same tree as its xDS
//     resource.
//
// Everything here is pure and deterministic: limits in, validation, token
// bucket refills and the service's configuration (bytes) out. It imports no
// Envoy protobuf, so the model that carries its limits imports none either:
// the Envoy filters, route actions and cluster are built by
// l7/translate/ratelimitenvoy, the service's xDS resource by
// l7/ratelimit/configserver. The package does no I/O, keeps no state, and
// does not touch the DSL, the model or the translator; they call it. See
// docs/ratelimit.md.
package ratelimit
