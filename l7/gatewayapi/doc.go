// Package gatewayapi translates Gateway API objects (gateway.networking.k8s.io
// v1, standard channel) of the GatewayClasses whose controllerName is
// ControllerName into the L7 model, and computes the status the spec asks
// of each object.
//
// It is pure: Build takes the API objects (Inputs) and returns the model
// (the same model.Config the DSL and the Service annotations produce, so
// one translator serves all three) and the status of every GatewayClass,
// Gateway, Route and TrafficPolicy. The controller (l7/gatewayctl) writes
// that status (MergeConditions keeps transition times of unchanged
// conditions) and the VIP Services; l7 serve publishes the model.
//
// The mapping:
//
//   - a Gateway is the model gateway "gw.<namespace>.<name>" of its class's
//     gateway group, with one listener per address and port
//     ("<protocol>-<port>", "-<i>" for the i-th further address): Gateway
//     listeners sharing a port share it (HTTPS: one certificate per
//     hostname; TLS: Passthrough, SNI targets from TLSRoutes);
//   - an HTTPRoute or GRPCRoute is the model service "hr.<ns>.<name>"
//     ("gr." for gRPC; "hr1.", "hr2." when it serves different hostnames on
//     different listeners), one model route per rule and match in the
//     spec's precedence order, upstreams "<ns>.<service>.<port>";
//   - a TLSRoute is the service "tr.<ns>.<name>" holding its clusters, on
//     no listener, and the SNI targets of the listeners it attached to;
//   - a ListenerSet's listeners join those of the Gateway that allows it,
//     after the Gateway's own and older sets' (listenerset.go);
//   - a TrafficPolicy sets the DSL's gateway functions on the services
//     and routes of its targets.
//
// Names longer than the model allows keep a head and a hash. Build reads
// only Inputs; it does no I/O and keeps no state between calls.
package gatewayapi
