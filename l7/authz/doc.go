// Package authz is the L7 tier's authorization service: an Envoy ext_authz
// v3 gRPC server (envoy.service.auth.v3.Authorization/Check) that runs the
// interceptors a route lists, in order, and answers allow (with headers to
// set on the upstream request and on the client's response) or deny (with
// a complete response).
//
// Which interceptors run travels with the request: the translator sets the
// route's chain (package chain) as the per-route context extension
// chain.Key, and Envoy sends it in CheckRequest.attributes.context_extensions.
// A request without it, or with an empty chain, is allowed at once: no
// store, no network. A chain that does not decode is answered 500 with the
// error (naming the field) in the body and in the gRPC status message, and
// logged once.
//
// Each interceptor runs with its own timeout and sees the headers set by
// the ones before it (an external interceptor sees sessionInterceptor's
// identity headers). The first refusal stops the chain. An interceptor that
// fails or times out answers 503 (fail closed: the request is not known to
// be unauthorized, the dependency is down, and a client or Envoy may retry;
// 403 would tell the client it lacks a permission it may have) unless the
// route says failOpen, which skips it (a skipped sessionInterceptor still
// removes the identity headers, so none the client sent gets through).
//
// The service calls, dials and opens only what the operator declared
// (Declare: the external interceptor endpoints and htpasswd files of the
// operator's DSL files, which l7 serve hands over before each
// publication); a chain naming anything else, whoever sent it on the
// socket, is answered 500 naming the field, and connections to gRPC
// interceptors no longer declared are closed.
//
// Metrics (names from configuration only, so labels stay bounded):
// tlb_l7_authz_decisions_total{interceptor,decision} with decision
// allow, deny or error; tlb_l7_authz_interceptor_duration_seconds{interceptor};
// tlb_l7_authz_checks_total{result} with result allow, deny, error or
// bad_config.
//
// The package owns the mapping between ext_authz and the interceptor
// contract, the cache of compiled chains and the gRPC service. Its
// dependencies (session store, HTTP client, gRPC dialer, logger, clock,
// metrics registerer) are passed to New; the listener to Serve.
package authz
