package api

// Gateway annotation choosing the Envoys that serve a Gateway (docs/gateway-api.md,
// "A fleet of its own").
const (
	// AnnotationFleet on a Gateway of a TLB class says which Envoys serve
	// it: FleetShared (absent: the same) or FleetDedicated. Any other
	// value leaves the Gateway Accepted=False (InvalidParameters).
	AnnotationFleet = "tlb.io/fleet"
	// FleetShared: the Gateway is served by its class's gateway group, the
	// fleet every Gateway of the group shares.
	FleetShared = "shared"
	// FleetDedicated: the Gateway is served by a gateway group of its own,
	// "<class group>.<namespace>.<name>" (gatewayapi.FleetGroup), run by
	// the operator on the class group's gateway nodes; no other Gateway's
	// listeners, routes or keys reach it, and the class group's fleet gets
	// none of this Gateway's.
	FleetDedicated = "dedicated"
)

// AnnotationFleetGroup on a Gateway's VIP Service is, written by the
// Gateway controller while the Gateway asks for FleetDedicated, the
// gateway group of its fleet: the --group of the l7 serve and Envoys the
// operator runs for it. Absent: the Gateway is served by
// AnnotationGatewayGroup's shared fleet.
const AnnotationFleetGroup = "tlb.io/fleet-group"
