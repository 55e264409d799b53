// Package intercept is the contract every interceptor of the authorization
// service implements, built-in or external: it sees a Request (the client's
// request plus what earlier interceptors of the route added) and returns a
// Verdict (go on, with headers to set upstream and downstream, or stop with
// a complete Response).
//
// It holds only these plain types: no Envoy types, no I/O, no state, so
// interceptors are tested without Envoy and the service maps them to
// ext_authz in one place.
package intercept
