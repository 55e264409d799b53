// Package director programs kernel IPVS on an L4 director from the desired
// state in package model: one virtual service per (VIP, protocol, port),
// every real server reached through an IPIP tunnel (direct server return).
//
// Each Reconcile takes the actual state from one of two places: a full
// listing (one GetServices, one GetDestinations per service it cares
// about) on the first reconcile, after an error and periodically; between
// them, what it remembers programming, listing nothing (see cache.go). It
// builds an explicit Plan (services to add, update, delete; real servers
// to add, update, delete; what is kept), returns early when the plan is
// empty and only then writes to the kernel. A write the kernel refuses
// sends the same reconcile to a full listing. It also keeps each service's
// real-server list in the canonical order, so that every director, however
// much churn it has seen, builds the same Maglev table as a freshly
// started one (see order.go).
//
// It owns only the IPVS services in its model and the ones it records as
// created (in memory and in a state file under the runtime directory). Any
// other IPVS service is foreign and is never updated or deleted; its real
// servers are not even listed. The record is written durably (see
// record_file.go); one it cannot read at start is moved aside and the
// director starts with an empty record rather than failing. It sets the net.ipv4.vs sysctls a director
// needs (see sysctl.go) and nothing else; it does not touch addresses,
// links or routes.
package director
