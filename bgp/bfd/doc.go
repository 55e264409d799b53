// Package bfd detects a lost forwarding path to a directly connected router
// in well under a second: Bidirectional Forwarding Detection in
// asynchronous mode (RFC 5880) over single-hop UDP (RFC 5881).
//
// It owns its UDP sockets (port 3784 to receive, one source port in
// 49152-65535 per session to send, TTL 255 both ways as GTSM asks) and
// the sessions' state machines. It knows nothing of BGP: a session reports
// its state changes to a callback, and the caller decides what a lost path
// means. The state machine (Machine) is plain code driven by the times it
// is handed, so it is tested with a fake clock; Session runs it against a
// Clock and a Sender that tests can replace. It keeps no package-level
// state and supports neither authentication, demand mode nor echo.
package bfd
