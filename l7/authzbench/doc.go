// Package authzbench measures the authorization service (make bench-authz)
// as issue 11 asks: a private redis-server holding the sessions, the
// service on loopback, and a real gRPC client keeping 64 Check calls in
// flight (64 concurrent HTTP/2 streams), each a POST on a route with
// sessionInterceptor + csrfInterceptor and a valid session; then the same
// with one external gRPC interceptor (allow, on loopback) added.
//
// Client, service, Redis and the external interceptor share the machine,
// so the figures are a floor for the service alone. It touches nothing
// outside loopback, the temporary directory and the redis-server it starts.
package authzbench
