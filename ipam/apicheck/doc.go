// Package apicheck tells whether the API server answers. The ipam binary
// runs a Checker beside its controller: while the API server does not
// answer, the Checker logs every failed attempt and tries again with
// exponential backoff, and reports "not ready" with the reason, which the
// binary's /readyz shows; once it answers, it reports ready and checks
// again at a steady interval.
//
// It owns no client: it calls the Prober it is given. It keeps no
// package-level state and does not touch any object.
package apicheck
