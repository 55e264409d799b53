package bgp

import (
	"context"
	"fmt"
	"net/netip"

	api "github.com/osrg/gobgp/v3/api"
)

// Names of the GoBGP objects the Speaker owns.
const (
	allowedSetName = "tlb-allowed-vips"
	importPolicy   = "tlb-import-local-only"
	exportPolicy   = "tlb-export-allowed-vips"
	globalTable    = "global"
)

// installPolicies sets the global import and export policies before any
// peer exists, so no route can leak in or out while the speaker starts.
//
// Import: GoBGP runs its global import policy on locally originated paths
// too, so the only accepted routes are local ones inside the allowed ranges;
// everything a peer sends is rejected (default REJECT).
// Export: only local paths inside the allowed ranges; default REJECT.
func installPolicies(ctx context.Context, srv policyServer, allowed []netip.Prefix) error {
	set := &api.DefinedSet{DefinedType: api.DefinedType_PREFIX, Name: allowedSetName}
	for _, p := range allowed {
		set.Prefixes = append(set.Prefixes, &api.Prefix{
			IpPrefix:      p.String(),
			MaskLengthMin: uint32(p.Bits()),
			MaskLengthMax: 32,
		})
	}
	if err := srv.AddDefinedSet(ctx, &api.AddDefinedSetRequest{DefinedSet: set}); err != nil {
		return fmt.Errorf("add prefix set %s: %w", allowedSetName, err)
	}
	for _, assign := range []struct {
		name string
		dir  api.PolicyDirection
	}{{importPolicy, api.PolicyDirection_IMPORT}, {exportPolicy, api.PolicyDirection_EXPORT}} {
		pol := &api.Policy{Name: assign.name, Statements: []*api.Statement{{
			Name: assign.name + "-accept",
			Conditions: &api.Conditions{
				PrefixSet: &api.MatchSet{Type: api.MatchSet_ANY, Name: allowedSetName},
				RouteType: api.Conditions_ROUTE_TYPE_LOCAL,
			},
			Actions: &api.Actions{RouteAction: api.RouteAction_ACCEPT},
		}}}
		if err := srv.AddPolicy(ctx, &api.AddPolicyRequest{Policy: pol}); err != nil {
			return fmt.Errorf("add policy %s: %w", assign.name, err)
		}
		if err := srv.SetPolicyAssignment(ctx, &api.SetPolicyAssignmentRequest{Assignment: &api.PolicyAssignment{
			Name:          globalTable,
			Direction:     assign.dir,
			Policies:      []*api.Policy{{Name: assign.name}},
			DefaultAction: api.RouteAction_REJECT,
		}}); err != nil {
			return fmt.Errorf("assign policy %s to the global table: %w", assign.name, err)
		}
	}
	return nil
}

// policyServer is the part of GoBGP that installPolicies needs.
type policyServer interface {
	AddDefinedSet(context.Context, *api.AddDefinedSetRequest) error
	AddPolicy(context.Context, *api.AddPolicyRequest) error
	SetPolicyAssignment(context.Context, *api.SetPolicyAssignmentRequest) error
}
