//go:build lab

package director_test

import "slices"

// dcOptions vary the data center; the zero value is the one the director
// tests of issue 3 use (one VIP, subnet announcements).
type dcOptions struct {
	// vips are the VIPs served (each on port 80 over both gateways);
	// [vip] when empty.
	vips []string
	// announce is health.announce ("" = the default, subnets).
	announce string
	// ports are the port of each VIP's services, over both gateways;
	// [80] when empty.
	ports []int
	// l7Backends are a VIP's services[].l7Backends, on its first port.
	l7Backends map[string][]string
	// apps adds so many application nodes behind the router (appAddr).
	apps int
	// envoy: the test runs the real Envoy on the gateways. They get no
	// echo server and no health endpoint, and the directors probe
	// Envoy's stats listener (:9902/ready) instead.
	envoy bool
	// bfd turns BFD on between each director and BIRD (100 ms x 5).
	bfd bool
	// ipv6 makes the data center dual-stack (dualstack_lab_test.go):
	// every node gets an IPv6 address beside its IPv4 one, the VIPs'
	// Service gets vip6 (in vip6Subnet) over the gateways' IPv6
	// addresses, and the directors announce both ranges to BIRD.
	ipv6 bool
}

func (o dcOptions) servicePorts() []int {
	if len(o.ports) == 0 {
		return []int{80}
	}
	return o.ports
}

func (o dcOptions) served() []string {
	vips := o.vips
	if len(vips) == 0 {
		vips = []string{vip}
	}
	if o.ipv6 {
		vips = append(slices.Clone(vips), vip6)
	}
	return vips
}

// ranges are the directors' vipRanges, announced to BIRD.
func (o dcOptions) ranges() []string {
	if o.ipv6 {
		return []string{vipSubnet, vip6Subnet}
	}
	return []string{vipSubnet}
}
