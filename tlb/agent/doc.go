// Package agent is the director's run loop: each desired model (from the
// config watcher) and each real-server health change flows through
//
//	desired model -> health (down real servers at weight 0) -> anyip + IPVS
//	-> readiness -> announce set -> BGP speaker
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
