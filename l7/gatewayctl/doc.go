// Package gatewayctl runs the Gateway API controller of TLB: for the
// GatewayClasses whose controllerName is gatewayapi.ControllerName it gives
// each Gateway its VIPs from the IPAM and writes the status that
// gatewayapi.Build computes to every GatewayClass, Gateway, ListenerSet, Route and
// TrafficPolicy of those classes.
//
// It watches the Gateway API kinds (GatewayClass, Gateway, ListenerSet,
// HTTPRoute, GRPCRoute, TLSRoute, ReferenceGrant), TLB's own GatewayClassConfig and
// TrafficPolicy, and the Namespaces, Services, EndpointSlices and Secrets
// routes refer to. Every event adds two keys to a rate-limited workqueue,
// one per worker: the VIP Services' and the status's; each sync follows
// watch -> model -> plan -> apply:
//
//   - model: the cached objects as gatewayapi.Inputs;
//   - plan: the VIP Services each Gateway of ours should have, one per
//     requested address (planVIPs), diffed against the VIP Services that
//     exist (create, update, delete, keep; matched by the address they
//     ask for), and the status Build computed, diffed against each
//     object's current status;
//   - apply: only the writes the diffs ask for (the VIP worker the VIP
//     Services', the status worker the status); an empty diff writes
//     nothing.
//
// A Gateway's VIP Service is a LoadBalancer Service of class tlb.io/l4
// without a selector, labelled ipam.LabelOwningGateway and owned by the
// Gateway; the IPAM controller (ipam/controller) allocates its VIP like any
// Service's, and the controller copies the VIPs into the Gateway's
// status.addresses. It owns the VIP Services (spec, its own labels and
// annotations) and the status of the objects of its classes; for Routes
// and TrafficPolicies it owns only the status entries whose controllerName
// is its own. It must not touch the spec of any Gateway API object, the
// status the IPAM writes, or objects of other controllers' classes.
package gatewayctl
