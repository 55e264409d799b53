//go:build lab

// Package bgp_test (lab build) proves the failover promise in the lab VM:
// BIRD with ECMP in front of two directors running the real tlb and
// bgpspeaker binaries; one director dies and no TCP stream breaks.
package bgp_test
