package model

import (
	"net/netip"
	"strings"
	"testing"
)

func svc(vip string, port uint16, rs ...RealServer) Service {
	return Service{VIP: netip.MustParseAddr(vip), Protocol: TCP, Port: port, RealServers: rs}
}

func rs(addr string, w int) RealServer { return RealServer{Addr: netip.MustParseAddr(addr), Weight: w} }

func TestValidate(t *testing.T) {
	tests := map[string]struct {
		desired Desired
		want    []string // substrings, one per expected FieldError, in order
	}{
		"valid default mh": {
			desired: Desired{Services: []Service{svc("203.0.113.10", 80, rs("198.18.2.2", 1), rs("198.18.2.3", 0))}},
		},
		"weight out of range names service and field": {
			desired: Desired{Services: []Service{svc("203.0.113.10", 80, rs("198.18.2.2", 1), rs("198.18.2.3", 70000))}},
			want:    []string{"service 203.0.113.10:80/tcp: realServers[1].weight: must be 0..65535"},
		},
		"negative weight": {
			desired: Desired{Services: []Service{svc("203.0.113.10", 80, rs("198.18.2.2", -1))}},
			want:    []string{"realServers[0].weight: must be 0..65535"},
		},
		"port zero": {
			desired: Desired{Services: []Service{svc("203.0.113.10", 0)}},
			want:    []string{"services[0]: port: must be 1..65535"},
		},
		"missing vip": {
			desired: Desired{Services: []Service{{Protocol: TCP, Port: 80}}},
			want:    []string{"services[0]: vip: must be an IP address"},
		},
		"bad protocol": {
			desired: Desired{Services: []Service{{VIP: netip.MustParseAddr("203.0.113.1"), Protocol: "icmp", Port: 80}}},
			want:    []string{`protocol: "icmp" is not one of tcp, udp, sctp`},
		},
		"unknown scheduler": {
			desired: Desired{Services: []Service{{VIP: netip.MustParseAddr("203.0.113.1"), Protocol: UDP, Port: 53, Scheduler: "fancy"}}},
			want:    []string{`service 203.0.113.1:53/udp: scheduler: "fancy" is not one of`},
		},
		"mh flag on wrr": {
			desired: Desired{Services: []Service{{VIP: netip.MustParseAddr("203.0.113.1"), Protocol: TCP, Port: 80, Scheduler: WeightedRoundRobin, Flags: []Flag{MHPort}}}},
			want:    []string{`flags[0]: flag "mh-port" needs scheduler mh, not wrr`},
		},
		"unknown flag": {
			desired: Desired{Services: []Service{{VIP: netip.MustParseAddr("203.0.113.1"), Protocol: TCP, Port: 80, Flags: []Flag{"turbo"}}}},
			want:    []string{`flags[0]: unknown flag "turbo"`},
		},
		"duplicate service": {
			desired: Desired{Services: []Service{svc("203.0.113.10", 80), svc("203.0.113.10", 80)}},
			want:    []string{"service 203.0.113.10:80/tcp: vip: duplicate of services[0]"},
		},
		"same vip other port is fine": {
			desired: Desired{Services: []Service{svc("203.0.113.10", 80), svc("203.0.113.10", 443)}},
		},
		"duplicate real server": {
			desired: Desired{Services: []Service{svc("203.0.113.10", 80, rs("198.18.2.2", 1), rs("198.18.2.2", 2))}},
			want:    []string{"realServers[1].address: 198.18.2.2 is a duplicate of realServers[0]"},
		},
		"mixed family": {
			desired: Desired{Services: []Service{svc("203.0.113.10", 80, rs("2001:db8::1", 1))}},
			want:    []string{"realServers[0].address: 2001:db8::1 is not of the VIP's address family"},
		},
		"vip outside ranges": {
			desired: Desired{
				VIPRanges: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")},
				Services:  []Service{svc("198.51.100.1", 80)},
			},
			want: []string{"vip: 198.51.100.1 is outside the VIP ranges [203.0.113.0/24]"},
		},
		"vip inside ranges": {
			desired: Desired{
				VIPRanges: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")},
				Services:  []Service{svc("203.0.113.99", 80)},
			},
		},
		"ipv4-mapped vip": {
			desired: Desired{Services: []Service{svc("::ffff:203.0.113.10", 80)}},
			want:    []string{"vip: ::ffff:203.0.113.10 is IPv4-mapped; write it as 203.0.113.10"},
		},
		"ipv4-mapped real server": {
			desired: Desired{Services: []Service{svc("203.0.113.10", 80, rs("::ffff:198.18.2.2", 1))}},
			want:    []string{"realServers[0].address: ::ffff:198.18.2.2 is IPv4-mapped"},
		},
		"loopback vip": {
			desired: Desired{Services: []Service{svc("127.0.0.1", 80)}},
			want:    []string{"vip: 127.0.0.1 is not a unicast address"},
		},
		"every error reported": {
			desired: Desired{Services: []Service{
				svc("203.0.113.10", 80, rs("198.18.2.2", 70000)),
				svc("203.0.113.11", 0),
			}},
			want: []string{"service 203.0.113.10:80/tcp: realServers[0].weight", "services[1]: port"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.desired.Validate()
			got := FieldErrors(err)
			if len(got) != len(tc.want) {
				t.Fatalf("Validate() = %v; want %d field errors %q", err, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i].Error(), w) {
					t.Errorf("error %d = %q; want it to contain %q", i, got[i].Error(), w)
				}
			}
		})
	}
}
