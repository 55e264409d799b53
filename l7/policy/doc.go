// Package policy converts the gateway functions' schema (package api:
// CORS, rate limits, JWT, route auth, responses, TLS policy, health,
// interceptors) to the L7 model, once for every front end: the DSL
// (l7/dsl), the Service annotations (l7/kube) and TrafficPolicy
// (l7/gatewayapi) call these functions and only say where the value was
// written.
//
// A conversion reads the shape: a duration, a range, a field that needs
// another. The values' meaning (an origin, a header name, a quota's unit)
// is checked with the whole object by model.CheckService and
// model.CheckGateway. Errors are Errors: each names the field from the
// function's root ("maxAge", "local.burst"), for the front end to prefix
// with its own path (a file and "routes[0].cors", an annotation,
// "spec.cors").
//
// The package is pure: no I/O, no logging, no Kubernetes.
package policy
