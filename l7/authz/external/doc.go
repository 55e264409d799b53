// Package external calls a service's own interceptor ("type: external")
// over gRPC (the Interceptor service of interceptorpb) or REST (the same
// messages in proto3 JSON mapping, POSTed to the configured URL; a 200
// reply carries the decision, any other status is an error).
//
// In: method, path, host, headers (with those set by earlier interceptors
// of the route), query parameters in order, the named groups of the
// configured pathPattern as path parameters, and the configured
// parameters. Out: allow, with optional headers for the upstream request
// and the client's response, or a complete response (status 200-599,
// headers, body) for the client. A reply that is neither, or names an
// invalid header, is an error, so the route's fail policy applies.
//
// The package owns the mapping between intercept and interceptorpb and the
// transports. Connections and HTTP clients come from the caller (Dialer,
// Doer); it opens none of its own.
package external
