// Package gatewaywatch is the one watcher of the objects
// gatewayapi.Build reads: informers on the Gateway API kinds and the
// tlb.io/v1alpha1 GatewayClassConfigs and TrafficPolicies, listed into
// gatewayapi.Inputs, and the VIP each Gateway got from its VIP Service.
// Both l7 serve (l7/kube's Source, which watches the kinds discovery says
// are served, per namespace) and l7 gateway-controller (l7/gatewayctl,
// every kind, cluster-wide, with the Services, EndpointSlices and Secrets
// too) use it.
//
// It reads only: it writes no object and no status, and builds no model.
package gatewaywatch
