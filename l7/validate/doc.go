// Package validate decides whether a resource set may be published. Every
// resource passes its generated ValidateAll(), and so does every message
// packed in an Any inside it (HTTP connection managers, filters, transport
// sockets), recursively. Then the semantic checks: no dangling reference
// (listener to route configuration or cluster or secret, route to cluster,
// cluster to endpoints), no duplicate names, no two filter chains of a
// listener with the same match, no two listeners on one port.
//
// It only reads the resources it is given; it never changes them and keeps
// no state.
package validate
