package ratelimit_test

import (
	"testing"

	rlsconf "github.com/envoyproxy/go-control-plane/ratelimit/config/ratelimit/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/ratelimit/configserver"
)

// TestProtoCarriesTheSameTree: the xDS form of the service configuration
// has the YAML's tree, node for node.
func TestProtoCarriesTheSameTree(t *testing.T) {
	cfg, err := ratelimit.Service("edge", exampleGroup()[1:2]) // api/search/1: both quotas
	if err != nil {
		t.Fatal(err)
	}
	want := &rlsconf.RateLimitConfig{Name: "edge", Domain: "edge", Descriptors: []*rlsconf.RateLimitDescriptor{{
		Key: "route", Value: "api/search/1",
		RateLimit: &rlsconf.RateLimitPolicy{Unit: rlsconf.RateLimitUnit_HOUR, RequestsPerUnit: 5000},
		Descriptors: []*rlsconf.RateLimitDescriptor{{
			Key:       "remote_address",
			RateLimit: &rlsconf.RateLimitPolicy{Unit: rlsconf.RateLimitUnit_SECOND, RequestsPerUnit: 10},
		}},
	}}}
	if got := configserver.Resource(cfg); !proto.Equal(got, want) {
		t.Errorf("Proto() = %v\nwant %v", got, want)
	}
}
