// Package chain is the per-route value that tells the authorization service
// which interceptors a route runs, in order, with their parameters. The
// translator puts it on a route as an ext_authz per-route context extension
// under the key Key (check_settings.context_extensions, a map of strings);
// Envoy sends it back with every CheckRequest of that route.
//
// The value is a JSON array, one object per interceptor, for example
//
//	[{"type":"sessionInterceptor","cookie":"sid","timeout":"50ms"},
//	 {"type":"csrfInterceptor","allowedOrigins":["https://app.example.com"]},
//	 {"type":"external","id":"todolist","transport":"grpc",
//	  "address":"todolist:8081","parameters":{"method":"authorize_create"}}]
//
// It is plain JSON inside a string, never a protobuf Any, so Envoy's config
// dump shows it as written (seed 000's lesson). Encode writes it; Decode
// reads it strictly (unknown fields, fields of another type, bad values are
// errors naming the field as interceptors[i].field) and fills in defaults.
//
// An external interceptor may name an operator's declaration (endpoint)
// instead of where it is, and basicAuth a declared htpasswd file (users):
// the only form a Kubernetes object may use (CheckDeclaredOnly). l7
// resolves the names before serving, so a chain on a route always says
// where.
//
// The package is pure: no I/O, no logging, nothing about Envoy or gRPC, so
// the translator can import it without the service.
package chain
