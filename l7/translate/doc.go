// Package translate turns a resolved model into Envoy v3 resources: one
// pure, deterministic function per xDS type (Listeners, Routes, Clusters,
// Endpoints, Secrets) plus the api_listener set for proxyless gRPC clients.
// Output is sorted by name, so equal models give byte-equal resources and
// golden files stay stable.
//
// Gateways (Envoy) and proxyless gRPC clients get different listener sets:
// Envoy refuses an api_listener over LDS, and gRPC refuses the server-side
// listeners Envoy needs. Both share the routes, clusters and endpoints.
//
// The package does no I/O and keeps no state; validation of what it builds
// lives in package validate.
package translate
