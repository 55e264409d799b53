//go:build tools

// Package tools pins the envoyproxy/ratelimit service so that
// tools/ratelimit/build.sh can build it from the module proxy for the tests
// of l7/ratelimit, which drive the real service through the gRPC API Envoy
// calls. Nothing here is linked into TLB.
package tools

import (
	_ "github.com/envoyproxy/ratelimit/src/service_cmd"
)
