// Package demo is the main job that `make demo` shows: inside the lab VM it
// builds a small data center (a client, a router, two directors, two gateway
// nodes, two backend nodes), runs the real `tlb`, `netd`, `l7` and Envoy
// binaries in it (Envoy and l7 as deploy/envoy runs them, through
// integration/gatewaylab), and shows a person HTTPS requests to a VIP,
// the certificate checked by the client, answered by both gateways'
// Envoys, with the replies going straight back to the client, and a
// director lost in the middle of downloads that all complete. It ends by
// starting `tlb console` on the router and printing its address and its
// plain-text summary.
//
// It owns only the network namespaces it creates and the processes it
// starts; everything is removed when it ends.
package demo
