// Package model is the source-independent description of what the L7
// gateway tier must do: gateway groups and their listeners (VIP, external
// port, protocol, certificates per SNI name), services with their routes and
// upstreams (clusters and endpoints), and TLS certificates.
//
// Any source feeds it: the DSL directory (package dsl) today, a Kubernetes
// controller later. A source builds a whole Config as plain data and hands
// it to the xDS server (xds.Server.Publish); it never talks xDS itself.
//
// The package also holds the pure, source-independent checks that need the
// whole Config at once (Resolve): duplicate routes between services, listener
// conflicts, dangling upstream and certificate references, and the mapping of
// external (possibly privileged) ports to unprivileged listener ports.
//
// It owns no I/O: it reads no files, opens no sockets and never logs. Private
// keys live only in memory, in the redacting type PrivateKey.
package model
