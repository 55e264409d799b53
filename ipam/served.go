package ipam

import (
	"errors"
	"fmt"
)

// ErrIPv6NotServed means a pool has an IPv6 CIDR while the L4 data path
// (directors, tunnels, netd) serves IPv4 VIPs only.
var ErrIPv6NotServed = errors.New("IPv6 VIPs are not served yet")

// CheckServed refuses a pool whose VIPs no director could serve: today
// any IPv6 CIDR. It is the one place the controller refuses IPv6 (the
// allocator itself handles both families); the CRD's CEL rule on
// spec.cidrs says the same to the API server. Serving IPv6 end to end
// lifts both. The error names the field: "spec.cidrs[1] 2001:db8::/64:
// IPv6 VIPs are not served yet".
func CheckServed(p VIPPool) error {
	for i, pfx := range p.Prefixes {
		if !pfx.Addr().Is4() {
			return fmt.Errorf("spec.cidrs[%d] %s: %w; use an IPv4 CIDR (nothing is allocated from this pool)", i, pfx, ErrIPv6NotServed)
		}
	}
	return nil
}
