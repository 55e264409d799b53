package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/translate"
)

// TestServeFlags: --group and --config are required, --keyless takes
// neither --authz-listen nor --grpc-clients, and --grpc-clients adds the
// proxyless clients' kind.
func TestServeFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--config d": "--group and --config are required",
		"--group g":  "--group and --config are required",
		"--group g --config d --keyless --grpc-clients":                    "--keyless serves no gateway",
		"--group g --config d --keyless --authz-listen unix:///run/a.sock": "--keyless serves no gateway",
	} {
		if _, err := parseServeFlags(strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	f, err := parseServeFlags(strings.Fields("--group g --config d --grpc-clients --ratelimit-address ratelimit:8081"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.kinds(); !reflect.DeepEqual(got, []translate.Kind{translate.Gateway, translate.GRPC}) {
		t.Errorf("kinds %v", got)
	}
	opts, err := f.resolveOptions()
	if err != nil || opts.RateLimitService == nil || opts.RateLimitService.Port != 8081 {
		t.Errorf("resolve options %+v, %v", opts, err)
	}
}
