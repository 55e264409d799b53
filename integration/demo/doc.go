// Package demo is the main job that `make demo` shows: inside the lab VM it
// builds a small data center (a client, a router, two directors, two gateway
// nodes), runs the real `tlb` and `netd` binaries in it, and shows a person
// requests to a VIP answered by both gateways, with the replies going
// straight back to the client. It ends by starting `tlb console` on the
// router and printing its address and its plain-text summary.
//
// It owns only the network namespaces it creates and the processes it
// starts; everything is removed when it ends.
package demo
