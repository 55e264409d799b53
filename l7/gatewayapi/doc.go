// Package gatewayapi translates Gateway API objects (gateway.networking.k8s.io
// v1, standard channel) of the GatewayClasses whose controllerName is
// ControllerName into the L7 model, and computes the status the spec asks
// of each object.
//
// It is pure: Build takes the API objects (Inputs) and returns the model
// (the same model.Config the DSL and the Service annotations produce, so
// one translator serves all three) and the status of every GatewayClass,
// Gateway and Route. The controller (l7/gatewayctl) writes that status and
// the VIP Services; l7 serve publishes the model.
package gatewayapi
