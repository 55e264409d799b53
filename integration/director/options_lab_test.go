//go:build lab

package director_test

// dcOptions vary the data center; the zero value is the one the director
// tests of issue 3 use (one VIP, subnet announcements).
type dcOptions struct {
	// vips are the VIPs served (each on port 80 over both gateways);
	// [vip] when empty.
	vips []string
	// announce is health.announce ("" = the default, subnets).
	announce string
	// l7Backends are a VIP's services[].l7Backends.
	l7Backends map[string][]string
	// app adds the application node (198.18.21.2) behind the router.
	app bool
}

func (o dcOptions) served() []string {
	if len(o.vips) == 0 {
		return []string{vip}
	}
	return o.vips
}
