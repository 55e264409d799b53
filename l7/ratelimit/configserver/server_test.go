package configserver_test

import (
	"context"
	"testing"

	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/ratelimit/configserver"
)

func config(t *testing.T, requests uint32) ratelimit.ServiceConfig {
	t.Helper()
	c, err := ratelimit.Service("edge", []ratelimit.RouteLimits{{Route: "shop/cart",
		Global: &ratelimit.Global{PerClientIP: &ratelimit.Quota{Requests: requests, Unit: ratelimit.Minute}}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSetVersionsByContent: equal limits are not sent again, other limits
// get another version, and a domain given twice is refused.
func TestSetVersionsByContent(t *testing.T) {
	ctx := context.Background()
	s := configserver.New(ctx)
	if s.Version() != "" {
		t.Fatalf("version before Set = %q", s.Version())
	}
	if changed, err := s.Set(ctx, config(t, 5)); err != nil || !changed {
		t.Fatalf("first Set = %v, %v", changed, err)
	}
	v1 := s.Version()
	if changed, err := s.Set(ctx, config(t, 5)); err != nil || changed || s.Version() != v1 {
		t.Fatalf("same limits: changed %v, err %v, version %s -> %s", changed, err, v1, s.Version())
	}
	if changed, err := s.Set(ctx, config(t, 6)); err != nil || !changed || s.Version() == v1 {
		t.Fatalf("new limits: changed %v, err %v, version %s", changed, err, s.Version())
	}
	if _, err := s.Set(ctx, config(t, 6), config(t, 7)); err == nil {
		t.Fatal("a domain given twice is accepted")
	}
}
