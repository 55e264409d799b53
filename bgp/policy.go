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
	// allowedSetName6 holds the IPv6 ranges: a GoBGP prefix set holds
	// one family.
	allowedSetName6 = "tlb-allowed-vips6"
	importPolicy    = "tlb-import-local-only"
	exportPolicy    = "tlb-export-allowed-vips"
	globalTable     = "global"
)

// installPolicies sets the global import and export policies before any
// peer exists, so no route can leak in or out while the speaker starts.
//
// Import: GoBGP runs its global import policy on locally originated paths
// too, so the only accepted routes are local ones inside the allowed ranges;
// everything a peer sends is rejected (default REJECT).
// Export: only local paths inside the allowed ranges; default REJECT.
func installPolicies(ctx context.Context, srv policyServer, allowed []netip.Prefix) error {
	sets := map[string]*api.DefinedSet{}
	var names []string // in the order first met
	for _, p := range allowed {
		name := allowedSetName
		if p.Addr().Is6() {
			name = allowedSetName6
		}
		if sets[name] == nil {
			sets[name] = &api.DefinedSet{DefinedType: api.DefinedType_PREFIX, Name: name}
			names = append(names, name)
		}
		sets[name].Prefixes = append(sets[name].Prefixes, &api.Prefix{
			IpPrefix:      p.String(),
			MaskLengthMin: uint32(p.Bits()),
			MaskLengthMax: uint32(p.Addr().BitLen()),
		})
	}
	for _, name := range names {
		if err := srv.AddDefinedSet(ctx, &api.AddDefinedSetRequest{DefinedSet: sets[name]}); err != nil {
			return fmt.Errorf("add prefix set %s: %w", name, err)
		}
	}
	for _, assign := range []struct {
		name string
		dir  api.PolicyDirection
	}{{importPolicy, api.PolicyDirection_IMPORT}, {exportPolicy, api.PolicyDirection_EXPORT}} {
		pol := &api.Policy{Name: assign.name}
		for _, set := range names {
			suffix := "-accept"
			if set == allowedSetName6 {
				suffix = "-accept-ipv6"
			}
			pol.Statements = append(pol.Statements, &api.Statement{
				Name: assign.name + suffix,
				Conditions: &api.Conditions{
					PrefixSet: &api.MatchSet{Type: api.MatchSet_ANY, Name: set},
					RouteType: api.Conditions_ROUTE_TYPE_LOCAL,
				},
				Actions: &api.Actions{RouteAction: api.RouteAction_ACCEPT},
			})
		}
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
