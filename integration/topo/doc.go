// Package topo builds small network topologies for lab tests: named nodes
// (client, router, directors, gateways) as network namespaces joined by veth
// links, with addresses, routes and sysctls, and ways to run a process or a
// function inside a node.
//
// A Lab owns the namespaces it creates and deletes them, with every link in
// them, in the test's cleanup. It never changes the namespace the test
// itself runs in.
package topo
