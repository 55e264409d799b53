// Package director programs kernel IPVS on an L4 director from the desired
// state in package model: one virtual service per (VIP, protocol, port),
// every real server reached through an IPIP tunnel (direct server return).
//
// Each Reconcile lists the actual state (one GetServices; one
// GetDestinations per service it cares about, except that between full
// listings a service unchanged in the model and in the kernel's service
// list reuses the real servers remembered from the last successful
// reconcile, see cache.go), builds an explicit Plan
// (services to add, update, delete; real servers to add, update, delete;
// what is kept), returns early when the plan is empty and only then writes
// to the kernel. It also keeps each service's real-server list in the
// canonical order, so that every director, however much churn it has seen,
// builds the same Maglev table as a freshly started one (see order.go).
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
