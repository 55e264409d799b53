// Package agent is the director's run loop: each desired model (from the
// config watcher) and each real-server health change flows through
//
//	desired model -> health (down real servers at weight 0) -> anyip + IPVS
//	-> per-VIP health (gateways, and the L7 services' ready backends) -> GTM
//	-> readiness -> announce set -> BGP speaker
//
// Each L7 backend change (the director's own probes in file mode, a new
// model from the source in Kubernetes mode) is one more pass; L7 state
// decides GTM and per-VIP announcements, never IPVS or readiness.
//
// and on shutdown it withdraws every route, then waits the drain period
// with IPVS left in place, so routers move new flows away while flows
// already on their way still find the director's rules.
//
// It owns only the order of those steps and the decisions between them
// (what weight a down real server gets, when the director is ready, what
// is announced). It touches the kernel, BGP and HTTP only through the
// small interfaces declared here; it never deletes IPVS state on exit and
// never announces while not ready.
package agent
