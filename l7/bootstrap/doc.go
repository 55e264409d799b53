// Package bootstrap writes the Envoy bootstrap of a TLB gateway: the one
// place that says where Envoy takes its config from (the l7 beside it,
// over a unix socket in the pod's volume), which generation it accepts
// (the l7 build's, see xds.Generation), where its admin API is (a unix
// socket, never a TCP port of the node) and what it exposes for scraping
// (a read-only listener with Prometheus stats and readiness only).
//
// The gateway pod's init container runs "l7 bootstrap" from the same
// image as its l7 container, so the two always agree on the generation.
package bootstrap
