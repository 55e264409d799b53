// Package console proves that the fleet console (internal/console) reads
// what the roles really serve: a director's obs listener with its GTM
// handler (tlb/health), and an l7 route table (l7/serve). The console
// imports no role, so these proofs, which need both sides, live here.
package console
