package bgp

import (
	"maps"
	"net/netip"
	"strings"
	"testing"
)

func TestAdvertisementsRefused(t *testing.T) {
	allowed := []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}
	u32 := func(v uint32) *uint32 { return &v }
	ok := AdvertisementConfig{Prefixes: []string{"203.0.113.0/25"}, Communities: []string{"64512:100"},
		LargeCommunities: []string{"64512:1:2"}, LocalPreference: u32(200), AggregationLength: 25}
	cases := map[string]struct {
		advs      []AdvertisementConfig
		wantField string
	}{
		"no prefixes":          {[]AdvertisementConfig{{Communities: []string{"1:1"}}}, "advertisements[0].prefixes"},
		"not a prefix":         {[]AdvertisementConfig{{Prefixes: []string{"nope"}}}, "advertisements[0].prefixes[0]"},
		"host bits":            {[]AdvertisementConfig{{Prefixes: []string{"203.0.113.1/25"}}}, "advertisements[0].prefixes[0]"},
		"outside allowed":      {[]AdvertisementConfig{{Prefixes: []string{"198.51.100.0/24"}}}, "advertisements[0].prefixes[0]"},
		"wider than allowed":   {[]AdvertisementConfig{{Prefixes: []string{"203.0.112.0/23"}}}, "advertisements[0].prefixes[0]"},
		"overlap":              {[]AdvertisementConfig{ok, {Prefixes: []string{"203.0.113.64/26"}}}, "advertisements[1].prefixes[0]"},
		"community part large": {[]AdvertisementConfig{{Prefixes: []string{"203.0.113.0/24"}, Communities: []string{"65536:1"}}}, "advertisements[0].communities[0]"},
		"community shape":      {[]AdvertisementConfig{{Prefixes: []string{"203.0.113.0/24"}, Communities: []string{"1:2:3"}}}, "advertisements[0].communities[0]"},
		"large shape":          {[]AdvertisementConfig{{Prefixes: []string{"203.0.113.0/24"}, LargeCommunities: []string{"1:2"}}}, "advertisements[0].largeCommunities[0]"},
		"large part":           {[]AdvertisementConfig{{Prefixes: []string{"203.0.113.0/24"}, LargeCommunities: []string{"1:2:-3"}}}, "advertisements[0].largeCommunities[0]"},
		"aggregate too wide":   {[]AdvertisementConfig{{Prefixes: []string{"203.0.113.0/25"}, AggregationLength: 24}}, "advertisements[0].aggregationLength"},
		"aggregate too long":   {[]AdvertisementConfig{{Prefixes: []string{"203.0.113.0/25"}, AggregationLength: 33}}, "advertisements[0].aggregationLength"},
		"named":                {[]AdvertisementConfig{{Name: "VIPPool blue", Prefixes: []string{"203.0.113.0/24"}, Communities: []string{"x"}}}, "advertisement VIPPool blue: communities[0]"},
	}
	for name, tc := range cases {
		_, errs := parseAdvertisements(tc.advs, allowed, advertisementField(tc.advs))
		if len(errs) == 0 {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(errs[0].Error(), tc.wantField) {
			t.Errorf("%s: error %q does not name %q", name, errs[0], tc.wantField)
		}
	}
	valid := []AdvertisementConfig{ok}
	if _, errs := parseAdvertisements(valid, allowed, advertisementField(valid)); len(errs) != 0 {
		t.Errorf("valid advertisement refused: %v", errs)
	}
}

func TestRoutesAggregateAndAttach(t *testing.T) {
	allowed := []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("198.51.100.0/24")}
	lp := uint32(300)
	cfg := []AdvertisementConfig{{
		Prefixes: []string{"203.0.113.0/24"}, Communities: []string{"64512:200", "64512:100", "64512:100"},
		LargeCommunities: []string{"64512:7:8"}, LocalPreference: &lp, AggregationLength: 24,
	}}
	advs, errs := parseAdvertisements(cfg, allowed, advertisementField(cfg))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	got := routes(advs, prefixes("203.0.113.7/32", "203.0.113.9/32", "198.51.100.5/32"))
	want := map[netip.Prefix]routeAttrs{
		netip.MustParsePrefix("203.0.113.0/24"):  {communities: "64512:100,64512:200", large: "64512:7:8", localPref: 300, hasLocalPref: true},
		netip.MustParsePrefix("198.51.100.5/32"): {},
	}
	if !maps.Equal(got, want) {
		t.Errorf("routes = %v, want %v", got, want)
	}
}

func TestParseCommunity(t *testing.T) {
	if c, err := ParseCommunity("64512:100"); err != nil || c != 64512<<16|100 {
		t.Errorf("ParseCommunity(64512:100) = %d, %v", c, err)
	}
	if c, err := ParseCommunity("0:0"); err != nil || c != 0 || formatCommunity(c) != "0:0" {
		t.Errorf("ParseCommunity(0:0) = %d, %v", c, err)
	}
}
