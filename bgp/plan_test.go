package bgp

import (
	"errors"
	"slices"
	"testing"
)

func TestNewPlan(t *testing.T) {
	cases := map[string]struct {
		announced, desired        []string
		advertise, withdraw, keep []string
		empty                     bool
	}{
		"nothing":         {empty: true},
		"same set":        {announced: []string{"203.0.113.0/24"}, desired: []string{"203.0.113.0/24"}, keep: []string{"203.0.113.0/24"}, empty: true},
		"add":             {desired: []string{"203.0.113.2/32", "203.0.113.1/32"}, advertise: []string{"203.0.113.1/32", "203.0.113.2/32"}},
		"withdraw":        {announced: []string{"203.0.113.0/24"}, withdraw: []string{"203.0.113.0/24"}},
		"mixed":           {announced: []string{"203.0.113.1/32", "203.0.113.2/32"}, desired: []string{"203.0.113.2/32", "203.0.113.3/32"}, advertise: []string{"203.0.113.3/32"}, withdraw: []string{"203.0.113.1/32"}, keep: []string{"203.0.113.2/32"}},
		"duplicates":      {desired: []string{"203.0.113.1/32", "203.0.113.1/32"}, advertise: []string{"203.0.113.1/32"}},
		"same addr, bits": {announced: []string{"203.0.113.0/24"}, desired: []string{"203.0.113.0/32"}, advertise: []string{"203.0.113.0/32"}, withdraw: []string{"203.0.113.0/24"}},
	}
	for name, tc := range cases {
		p := NewPlan(prefixes(tc.announced...), prefixes(tc.desired...))
		if got := strs(p.ToAdvertise); !slices.Equal(got, nilIfEmpty(tc.advertise)) {
			t.Errorf("%s: advertise = %v, want %v", name, got, tc.advertise)
		}
		if got := strs(p.ToWithdraw); !slices.Equal(got, nilIfEmpty(tc.withdraw)) {
			t.Errorf("%s: withdraw = %v, want %v", name, got, tc.withdraw)
		}
		if got := strs(p.ToKeep); !slices.Equal(got, nilIfEmpty(tc.keep)) {
			t.Errorf("%s: keep = %v, want %v", name, got, tc.keep)
		}
		if p.Empty() != tc.empty {
			t.Errorf("%s: Empty() = %v, want %v", name, p.Empty(), tc.empty)
		}
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return []string{}
	}
	return s
}

func TestCheckAllowed(t *testing.T) {
	allowed := prefixes("203.0.113.0/24", "198.51.100.128/25")
	cases := map[string]struct {
		desired []string
		ok      bool
	}{
		"range itself":      {[]string{"203.0.113.0/24"}, true},
		"host inside":       {[]string{"203.0.113.200/32", "198.51.100.129/32"}, true},
		"sub-range":         {[]string{"203.0.113.128/26"}, true},
		"outside":           {[]string{"192.0.2.1/32"}, false},
		"covers the range":  {[]string{"203.0.112.0/22"}, false},
		"other half":        {[]string{"198.51.100.0/25"}, false},
		"one bad spoils it": {[]string{"203.0.113.1/32", "10.0.0.0/8"}, false},
	}
	for name, tc := range cases {
		err := CheckAllowed(allowed, prefixes(tc.desired...))
		if tc.ok != (err == nil) {
			t.Errorf("%s: CheckAllowed(%v) = %v, want ok=%v", name, tc.desired, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrNotAllowed) {
			t.Errorf("%s: error %v does not wrap ErrNotAllowed", name, err)
		}
	}
}
