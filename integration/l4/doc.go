// Package l4 holds the lab proofs of TLB's L4 data path (issue 2): IPVS
// tunnel-mode directors in front of gateway nodes running netd, with
// direct server return, on the lab VM's real kernel. The tests live in
// *_lab_test.go files (build tag "lab") and run with
//
//	./tools/lab-test.sh ./integration/l4
//
// They build their own network namespaces with integration/topo and touch
// nothing outside them.
package l4
