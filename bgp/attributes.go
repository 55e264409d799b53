package bgp

import (
	"strings"

	api "github.com/osrg/gobgp/v3/api"
	"google.golang.org/protobuf/types/known/anypb"
)

// apiAttributes encodes the communities, large communities and local
// preference of a route as GoBGP path attributes. a holds validated
// values (parseAdvertisements), so parsing them again cannot fail.
func (a routeAttrs) apiAttributes() ([]*anypb.Any, error) {
	var msgs []*anypb.Any
	if a.communities != "" {
		var cs []uint32
		for _, s := range strings.Split(a.communities, ",") {
			c, _ := ParseCommunity(s)
			cs = append(cs, c)
		}
		x, err := anypb.New(&api.CommunitiesAttribute{Communities: cs})
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, x)
	}
	if a.large != "" {
		var ls []*api.LargeCommunity
		for _, s := range strings.Split(a.large, ",") {
			c, _ := parseLargeCommunity(s)
			ls = append(ls, &api.LargeCommunity{GlobalAdmin: c.global, LocalData1: c.local1, LocalData2: c.local2})
		}
		x, err := anypb.New(&api.LargeCommunitiesAttribute{Communities: ls})
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, x)
	}
	if a.hasLocalPref {
		x, err := anypb.New(&api.LocalPrefAttribute{LocalPref: a.localPref})
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, x)
	}
	return msgs, nil
}
