// Package xds serves the translated configuration to Envoy gateways and
// proxyless gRPC clients over ADS (state of the world and delta), built on
// go-control-plane's snapshot cache with one snapshot per (kind, group).
//
// Publish is the single entry point for any source (the DSL directory, a
// Kubernetes controller): it takes a whole model.Config, resolves it,
// translates it per group, validates every resource, and only then swaps the
// group's snapshot, and only if something changed. A set that fails
// validation is never sent; the group keeps its last good snapshot.
//
// Versions are content hashes, per type, prefixed with the schema
// generation, so a restarted server produces the same versions for the same
// config and clients resync without change. A client must name its group
// (node.cluster), kind and schema generation (node metadata); one that names
// a group this server does not serve or another generation is refused,
// never half-served.
//
// The package owns its gRPC service registration and its metrics; it does
// not listen on sockets itself (main does) and never logs key material.
package xds
