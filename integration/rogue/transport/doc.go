// Package transport is the rogue-client suite of the L7 tier's secrets and
// transport (issue 22): host tests that start the real binaries (l7 serve
// as a process, Envoy through integration/envoyproc, the manifest's Redis)
// and play an attacker who is
//
//   - a local user of a gateway node (another uid, trying every socket and
//     port the gateway's l7 and Envoy listen on),
//   - a gateway of another group (over mutual TLS, with its own SPIFFE
//     identity),
//   - the holder of a stolen certificate of another kind (a proxyless gRPC
//     client's identity asking for a gateway's resources),
//
// and assert that each gets nothing beyond its own: no key of the group,
// no route list, no configuration, no control. It also reads the memory of
// the l7 processes: a key that is not theirs must not be there at all.
//
// The tests need root (to run the local user's probe as nobody and to
// read another process's memory), Envoy and redis-server (tools/deps.sh).
// They own the processes they start and their temporary directories.
package transport
