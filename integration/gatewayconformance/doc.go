// Package gatewayconformance runs the upstream Gateway API conformance
// suite (sigs.k8s.io/gateway-api/conformance) against TLB's Gateway API
// controller and a real kube-apiserver, with traffic through the group's
// l7 serve and a real Envoy.
//
// The run itself is TestGatewayAPIConformance (build tag conformance,
// tools/bench-gateway-api.sh, in a network namespace of its own). Beside
// the API server it runs kube-controller-manager (Deployments,
// ReplicaSets, EndpointSlices) and a node simulator (NodeSim) instead of a
// kubelet: one Ready Node, the suite's Pods bound to it, their echo server
// containers run as processes in network namespaces of their own
// (PodProcesses) and reported Running and Ready. It owns only those
// processes and namespaces, the simulated node and its own temporary
// directory.
package gatewayconformance
