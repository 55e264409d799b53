//go:build lab

// Package director_test proves, in the lab VM, that the real `tlb run`
// binary is the whole director of issue 3: with `bgp:` and `health:` in
// its config it announces the VIP range to a real BIRD only when ready,
// survives the loss of a peer director without breaking streams, withdraws
// first on SIGTERM, and moves new flows off a gateway whose health fails;
// and (issue 13) that a real Prometheus scraping it with the shipped alert
// rules fires TLBBGPSessionDown when BIRD cuts its session.
// It owns only the network namespaces, files and processes it creates.
package director_test
