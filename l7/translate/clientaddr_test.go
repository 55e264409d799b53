package translate_test

import (
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/dsl"
)

const xffGateways = `kind: gateway/gateway/v1
name: gw
group: g
listeners:
  - {name: guarded, vip: 203.0.113.1, port: 80, protocol: HTTP}
  - {name: open, vip: 203.0.113.2, port: 80, protocol: HTTP, xffTrustedHops: 2}
`

// TestXFFTrustedHopsOnlyWhereSet (issue 22): a listener behind proxies
// says how many (xffTrustedHops): its connection manager takes the client
// address that many hops into X-Forwarded-For; every other listener keeps
// the default, the peer address, which no header changes; the routes are
// the same either way. On main there was no such setting.
func TestXFFTrustedHopsOnlyWhereSet(t *testing.T) {
	r := resolveDocs(t, xffGateways, edgeApp, edgeOpen)
	hcms, rcs := gatewaySet(t, r)
	if !hcms[guardedL].GetUseRemoteAddress().GetValue() || hcms[guardedL].GetXffNumTrustedHops() != 0 {
		t.Errorf("%s: use_remote_address %v, trusted hops %d; want the peer address", guardedL, hcms[guardedL].GetUseRemoteAddress(), hcms[guardedL].GetXffNumTrustedHops())
	}
	if !hcms[openL].GetUseRemoteAddress().GetValue() || hcms[openL].GetXffNumTrustedHops() != 2 {
		t.Errorf("%s: use_remote_address %v, trusted hops %d; want 2 hops", openL, hcms[openL].GetUseRemoteAddress(), hcms[openL].GetXffNumTrustedHops())
	}
	if len(rcs[openL].GetVirtualHosts()) == 0 {
		t.Errorf("%s serves no route", openL)
	}
	for name, tc := range map[string]struct{ doc, want string }{
		"on a TCP listener": {`kind: gateway/gateway/v1
name: t
listeners: [{name: db, vip: 203.0.113.9, port: 5432, protocol: TCP, target: a/b, xffTrustedHops: 1}]
`, "listeners[0].xffTrustedHops: only HTTP and HTTPS"},
		"too many": {`kind: gateway/gateway/v1
name: t
listeners: [{name: web, vip: 203.0.113.9, port: 80, protocol: HTTP, xffTrustedHops: 9}]
`, "listeners[0].xffTrustedHops: at most 5"},
	} {
		_, err := dsl.Parse("t.yaml", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
