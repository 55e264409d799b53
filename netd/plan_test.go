package netd

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/tlbproject/tlb/netd/model"
)

func TestDiff(t *testing.T) {
	inSync := func() Actual {
		return Actual{
			Tunnel: TunnelState{Exists: true, Kind: "ipip", Up: true},
			Addrs:  []TunnelAddr{{Prefix: netip.MustParsePrefix("203.0.113.10/32"), Label: "tunl0:tlb"}},
			Sysctls: map[string]string{
				"net/ipv4/conf/all/arp_ignore": "1", "net/ipv4/conf/all/arp_announce": "2",
				"net/ipv4/conf/tunl0/arp_ignore": "1", "net/ipv4/conf/tunl0/arp_announce": "2",
				"net/ipv4/conf/tunl0/rp_filter": "2\n",
			},
			Clamp: ClampState{Intact: true, MSS: 1440, VIPs: []netip.Addr{vip10}},
		}
	}
	desired := model.NewGateway("tunl0", []netip.Addr{vip10}, 1440)
	tests := map[string]struct {
		actual func() Actual
		check  func(t *testing.T, p Plan)
	}{
		"in sync": {actual: inSync, check: func(t *testing.T, p Plan) {
			if !p.Empty() {
				t.Fatalf("plan %s, want empty", p)
			}
		}},
		"owned address with a wrong length is replaced": {
			actual: func() Actual {
				a := inSync()
				a.Addrs = []TunnelAddr{{Prefix: netip.MustParsePrefix("203.0.113.10/24"), Label: "tunl0:tlb"}}
				return a
			},
			check: func(t *testing.T, p Plan) {
				if !slices.Equal(p.AddVIPs, []netip.Addr{vip10}) || len(p.DelVIPs) != 1 || p.DelVIPs[0].Prefix.Bits() != 24 {
					t.Fatalf("plan %s: want bind /32 and unbind the /24", p)
				}
			},
		},
		"foreign address with a label of another owner is kept": {
			actual: func() Actual {
				a := inSync()
				a.Addrs = append(a.Addrs, TunnelAddr{Prefix: netip.MustParsePrefix("198.51.100.1/32"), Label: "tunl0:other"})
				return a
			},
			check: func(t *testing.T, p Plan) {
				if !p.Empty() {
					t.Fatalf("plan %s, want empty", p)
				}
			},
		},
		"clamp with an extra VIP loses it": {
			actual: func() Actual {
				a := inSync()
				a.Clamp.VIPs = []netip.Addr{vip10, vip12}
				return a
			},
			check: func(t *testing.T, p Plan) {
				if p.ClampRebuild || !slices.Equal(p.ClampDel, []netip.Addr{vip12}) || p.Writes() != 1 {
					t.Fatalf("plan %s: want one set update removing %v", p, vip12)
				}
			},
		},
		"clamp not intact is rebuilt": {
			actual: func() Actual {
				a := inSync()
				a.Clamp = ClampState{}
				return a
			},
			check: func(t *testing.T, p Plan) {
				if !p.ClampRebuild || p.Writes() != 1 {
					t.Fatalf("plan %s: want one rebuild", p)
				}
			},
		},
		"tunnel down": {
			actual: func() Actual {
				a := inSync()
				a.Tunnel.Up = false
				return a
			},
			check: func(t *testing.T, p Plan) {
				if !p.BringUp || p.CreateTunnel || p.Writes() != 1 {
					t.Fatalf("plan %s: want only bring up", p)
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := Diff(desired, tc.actual())
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, p)
		})
	}
}

func TestDiffPorts(t *testing.T) {
	https := model.PortMap{VIP: vip10, Protocol: model.ProtocolTCP, Port: 443, TargetPort: 10443}
	http := model.PortMap{VIP: vip10, Protocol: model.ProtocolTCP, Port: 80, TargetPort: 8080}
	https2 := model.PortMap{VIP: vip10, Protocol: model.ProtocolTCP, Port: 443, TargetPort: 20443}
	actual := func(c ClampState) Actual {
		return Actual{
			Tunnel: TunnelState{Exists: true, Kind: "ipip", Up: true},
			Addrs:  []TunnelAddr{{Prefix: netip.MustParsePrefix("203.0.113.10/32"), Label: "tunl0:tlb"}},
			Sysctls: map[string]string{
				"net/ipv4/conf/all/arp_ignore": "1", "net/ipv4/conf/all/arp_announce": "2",
				"net/ipv4/conf/tunl0/arp_ignore": "1", "net/ipv4/conf/tunl0/arp_announce": "2",
				"net/ipv4/conf/tunl0/rp_filter": "2",
			},
			Clamp: c,
		}
	}
	tests := map[string]struct {
		want        []model.PortMap
		have        ClampState
		wantRebuild bool
		wantAdd     []model.PortMap
		wantDel     []model.PortMap
	}{
		"equal maps: no writes": {
			want: []model.PortMap{http, https},
			have: ClampState{Intact: true, MSS: 1440, VIPs: []netip.Addr{vip10}, Ports: []model.PortMap{http, https}},
		},
		"no ports wanted, none there": {
			have: ClampState{Intact: true, MSS: 1440, VIPs: []netip.Addr{vip10}},
		},
		"new mapping rebuilds the table": {
			want:        []model.PortMap{http, https},
			have:        ClampState{Intact: true, MSS: 1440, VIPs: []netip.Addr{vip10}, Ports: []model.PortMap{http}},
			wantRebuild: true, wantAdd: []model.PortMap{https},
		},
		"removed mapping rebuilds the table": {
			want:        []model.PortMap{https},
			have:        ClampState{Intact: true, MSS: 1440, VIPs: []netip.Addr{vip10}, Ports: []model.PortMap{http, https}},
			wantRebuild: true, wantDel: []model.PortMap{http},
		},
		"changed target is a delete and an add": {
			want:        []model.PortMap{https2},
			have:        ClampState{Intact: true, MSS: 1440, VIPs: []netip.Addr{vip10}, Ports: []model.PortMap{https}},
			wantRebuild: true, wantAdd: []model.PortMap{https2}, wantDel: []model.PortMap{https},
		},
		"table not intact: every mapping is added": {
			want:        []model.PortMap{http, https},
			have:        ClampState{},
			wantRebuild: true, wantAdd: []model.PortMap{http, https},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			desired := model.NewGateway("tunl0", []netip.Addr{vip10}, 1440).WithPorts(tc.want)
			p, err := Diff(desired, actual(tc.have))
			if err != nil {
				t.Fatal(err)
			}
			if p.ClampRebuild != tc.wantRebuild || !slices.Equal(p.PortsAdd, tc.wantAdd) || !slices.Equal(p.PortsDel, tc.wantDel) {
				t.Fatalf("plan %s: want rebuild=%v +%v -%v", p, tc.wantRebuild, tc.wantAdd, tc.wantDel)
			}
			wantWrites := 0
			if tc.wantRebuild {
				wantWrites = 1
			}
			if p.Writes() != wantWrites {
				t.Fatalf("plan %s makes %d writes, want %d", p, p.Writes(), wantWrites)
			}
		})
	}
}
