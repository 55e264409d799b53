// Package gatewayconformance runs the upstream Gateway API conformance
// suite (sigs.k8s.io/gateway-api/conformance) against TLB's Gateway API
// controller and a real kube-apiserver, and derives the list of the
// suite's tests that need a data plane, which the run skips.
//
// The run itself is TestGatewayAPIConformance (build tag conformance,
// tools/bench-gateway-api.sh). Beside the API server it runs
// kube-controller-manager (Deployments, ReplicaSets, EndpointSlices) and a
// node simulator (NodeSim) instead of a kubelet: one Ready Node, the
// suite's Pods bound to it and reported Running and Ready. It owns only
// those processes, the simulated node and its own temporary directory.
package gatewayconformance
