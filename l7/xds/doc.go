// Package xds serves the translated configuration to Envoy gateways and
// proxyless gRPC clients over ADS (state of the world and delta), built on
// go-control-plane's snapshot cache with one snapshot per (kind, group).
//
// It is the publish end of the pipeline (l7/pipeline): Apply takes the
// resource sets of every snapshot key, already resolved, translated and
// validated (l7/xdsbuild), and swaps only the snapshots that changed. A key
// whose set failed validation keeps its last good snapshot. Nothing here
// resolves or translates a configuration served; the schema generation
// hashes what the translator makes of a fixed reference config
// (translate.WriteReference).
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
