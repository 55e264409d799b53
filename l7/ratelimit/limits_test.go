package ratelimit

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidateNamesTheField(t *testing.T) {
	ok := &Quota{Requests: 10, Unit: Second}
	tests := map[string]struct {
		limits RouteLimits
		fields []string // want one *FieldError per field, in this order
	}{
		"local and global":        {RouteLimits{Route: "web/0", Local: &Local{RequestsPerSecond: 2.5, Burst: 5}, Global: &Global{PerClientIP: ok, PerRoute: ok}}, nil},
		"no limits":               {RouteLimits{Route: "web/0"}, nil},
		"empty route":             {RouteLimits{Local: &Local{RequestsPerSecond: 1, Burst: 1}}, []string{"route"}},
		"route with a space":      {RouteLimits{Route: "web 0"}, []string{"route"}},
		"zero rate":               {RouteLimits{Route: "r", Local: &Local{Burst: 1}}, []string{"local.requestsPerSecond"}},
		"negative rate":           {RouteLimits{Route: "r", Local: &Local{RequestsPerSecond: -1, Burst: 1}}, []string{"local.requestsPerSecond"}},
		"four decimals":           {RouteLimits{Route: "r", Local: &Local{RequestsPerSecond: 0.0005, Burst: 1}}, []string{"local.requestsPerSecond"}},
		"too fast":                {RouteLimits{Route: "r", Local: &Local{RequestsPerSecond: 2e6, Burst: 1}}, []string{"local.requestsPerSecond"}},
		"zero burst":              {RouteLimits{Route: "r", Local: &Local{RequestsPerSecond: 1}}, []string{"local.burst"}},
		"empty global":            {RouteLimits{Route: "r", Global: &Global{}}, []string{"global"}},
		"zero requests, bad unit": {RouteLimits{Route: "r", Global: &Global{PerRoute: &Quota{Unit: "day"}}}, []string{"global.perRoute.requests", "global.perRoute.unit"}},
		"both quotas bad":         {RouteLimits{Route: "r", Global: &Global{PerClientIP: &Quota{Unit: Minute}, PerRoute: &Quota{Requests: 1}}}, []string{"global.perClientIP.requests", "global.perRoute.unit"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := fieldsOf(tc.limits.Validate())
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Errorf("Validate() fields = %v, want %v (error: %v)", got, tc.fields, tc.limits.Validate())
			}
		})
	}
}

// fieldsOf lists the fields of the *FieldErrors joined in err.
func fieldsOf(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	var fe *FieldError
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			out = append(out, fieldsOf(e)...)
		}
		return out
	}
	if errors.As(err, &fe) {
		return []string{fe.Field}
	}
	return []string{"?" + err.Error()}
}

func TestValidateGroupRefusesASharedRoute(t *testing.T) {
	err := ValidateGroup([]RouteLimits{{Route: "a"}, {Route: "b"}, {Route: "a"}})
	if err == nil || !strings.Contains(err.Error(), `routes[2]: route: "a" is used by another route`) {
		t.Fatalf("ValidateGroup = %v, want the duplicate named", err)
	}
}

func TestBucketKeepsTheRateAndEnvoysMinimumInterval(t *testing.T) {
	tests := []struct {
		rps      float64
		tokens   uint32
		interval time.Duration
	}{
		{1, 1, time.Second},
		{3, 3, time.Second},
		{10, 1, 100 * time.Millisecond},
		{20, 1, 50 * time.Millisecond},
		{100, 5, 50 * time.Millisecond},
		{2.5, 1, 400 * time.Millisecond},
		{0.5, 1, 2 * time.Second},
		{0.001, 1, 1000 * time.Second},
		{33.333, 33333, 1000 * time.Second},
	}
	for _, tc := range tests {
		b := NewRefill(tc.rps)
		if b.Tokens != tc.tokens || b.Interval != tc.interval {
			t.Errorf("NewRefill(%v) = %d per %s, want %d per %s", tc.rps, b.Tokens, b.Interval, tc.tokens, tc.interval)
		}
		if b.Interval < minFill || b.Interval%minFill != 0 {
			t.Errorf("NewRefill(%v) interval %s is not a multiple of %s", tc.rps, b.Interval, minFill)
		}
		if got := float64(b.Tokens) / b.Interval.Seconds(); got < tc.rps*0.999999 || got > tc.rps*1.000001 {
			t.Errorf("NewRefill(%v) rate = %v", tc.rps, got)
		}
	}
}
