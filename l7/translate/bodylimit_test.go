package translate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

// TestLongDirectResponseBodies: the model takes direct response and
// maintenance bodies up to model.MaxResponseBody, while Envoy refuses a
// whole route table holding a body over 4,096 bytes unless the table
// raises max_direct_response_body_size_bytes. A table with such a body
// raises it (and resolve has the real Envoy take the result); others
// keep Envoy's default, unchanged.
func TestLongDirectResponseBodies(t *testing.T) {
	doc := func(direct, maintenance int) string {
		return fmt.Sprintf(`kind: gateway/service/v1
name: site
group: g
hosts: [site.example.com]
listeners: [gw/web]
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes:
  - {name: direct, prefix: /direct, directResponse: {status: 200, body: %q}}
  - {name: down, prefix: /down, target: u, maintenance: {enabled: true, body: %q}}
  - {name: main, prefix: /, target: u}
`, strings.Repeat("d", direct), strings.Repeat("m", maintenance))
	}
	const gw = "kind: gateway/gateway/v1\nname: gw\ngroup: g\nlisteners: [{name: web, vip: 203.0.113.1, port: 80, protocol: HTTP}]\n"
	for _, tc := range []struct {
		name                string
		direct, maintenance int
		limit               uint32 // 0: Envoy's default, field unset
	}{
		{"short bodies", 10, 10, 0},
		{"4096 bytes, Envoy's default", 4096, 4096, 0},
		{"a direct response over it", 4097, 10, model.MaxResponseBody},
		{"a maintenance body over it", 10, 5000, model.MaxResponseBody},
		{"the longest the model takes", model.MaxResponseBody, model.MaxResponseBody, model.MaxResponseBody},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rcs := gatewaySet(t, resolveDocs(t, gw, doc(tc.direct, tc.maintenance)))
			rc := rcs["http-203.0.113.1-80"]
			if got := rc.GetMaxDirectResponseBodySizeBytes().GetValue(); got != tc.limit {
				t.Errorf("max_direct_response_body_size_bytes %d, want %d", got, tc.limit)
			}
			if got := routesByName(rc)["site/direct"].GetDirectResponse().GetBody().GetInlineString(); len(got) != tc.direct {
				t.Errorf("direct body of %d bytes, want %d", len(got), tc.direct)
			}
		})
	}
}
