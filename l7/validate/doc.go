// Package validate decides whether a resource set may be published. Every
// resource passes its generated ValidateAll(), and so does every message
// packed in an Any inside it (HTTP connection managers, filters, transport
// sockets), recursively. Then the semantic checks: no dangling reference
// (listener to route configuration or cluster or secret, route to cluster,
// cluster to endpoints), no duplicate names, no two filter chains of a
// listener with the same match, no two listeners on one port.
//
// It only reads the resources it is given and never changes them. Set
// keeps no state; a Memo remembers, per resource and per virtual host of a
// route table, what it found for a content, so that a publish checks what
// changed (memo.go).
package validate
