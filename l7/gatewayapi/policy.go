package gatewayapi

// policies attaches the TrafficPolicies to the model.
func (b *builder) policies() {}
