// Package gatewaylab puts TLB's L7 tier on the nodes of a lab topology
// (integration/topo), for the lab tests and the demo: application
// backends on nodes of their own (Backend), the DSL of one site served on
// a VIP with certificates from a test CA (Site), the real Envoy and "l7
// serve" on a gateway node as deploy/envoy runs them (StartGateway), and
// HTTPS clients that reach the VIP from a node (Client), with paced
// downloads whose every byte is checked (Fetch).
//
// It owns the files, listeners and processes it starts, nothing else.
package gatewaylab
