package config

import (
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/netd/model"
)

func TestParse(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Config
		wantErr string // substring naming the field
	}{
		"full": {
			in: `
netd:
  metricsAddress: 127.0.0.1:9200
  tunnel: tunl0
  mss: 1400
vips: [203.0.113.11, 203.0.113.10]
`,
			want: Config{MetricsAddress: "127.0.0.1:9200", Gateway: model.Gateway{
				Tunnel: "tunl0", Tunnel6: "ip6tnl0", MSS: 1400,
				VIPs: []netip.Addr{netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("203.0.113.11")},
			}},
		},
		"defaults": {
			in: "vips: [198.51.100.1]\n",
			want: Config{MetricsAddress: DefaultMetricsAddress, Gateway: model.Gateway{
				Tunnel: "tunl0", Tunnel6: "ip6tnl0", MSSPolicy: model.MSSPolicy{Mode: model.MSSFromMTU}, VIPs: []netip.Addr{netip.MustParseAddr("198.51.100.1")},
			}},
		},
		"empty file": {in: "  \n", wantErr: "the file is empty"},
		"explicit no vips": {
			in:   "vips: []\n",
			want: Config{MetricsAddress: DefaultMetricsAddress, Gateway: model.Gateway{Tunnel: "tunl0", Tunnel6: "ip6tnl0", MSSPolicy: model.MSSPolicy{Mode: model.MSSFromMTU}, VIPs: []netip.Addr{}}},
		},
		"unknown top-level field": {in: "vip: [203.0.113.10]\n", wantErr: `unknown field "vip"`},
		"unknown netd field":      {in: "netd:\n  msss: 1400\n", wantErr: `unknown field "msss"`},
		"bad vip":                 {in: "vips: [203.0.113.10, nope]\n", wantErr: "vips[1]"},
		"ipv6 vip": {in: "vips: ['2001:db8::1', 203.0.113.10]\n", want: Config{MetricsAddress: DefaultMetricsAddress, Gateway: model.Gateway{
			Tunnel: "tunl0", Tunnel6: "ip6tnl0", MSSPolicy: model.MSSPolicy{Mode: model.MSSFromMTU},
			VIPs: []netip.Addr{netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("2001:db8::1")}}}},
		"ipv4-mapped vip":     {in: "vips: ['::ffff:203.0.113.10']\n", wantErr: "vips[0]: \"::ffff:203.0.113.10\" is IPv4-mapped; write it as 203.0.113.10"},
		"ipv6 link-local vip": {in: "vips: ['fe80::1']\n", wantErr: "vips[0]"},
		"ipv6 vip in the port map": {in: "vips: ['2001:db8::1']\nports:\n- {vip: '2001:db8::1', port: 443, targetPort: 10443}\n",
			wantErr: "ports[0].vip: 2001:db8::1 is IPv6; the port map redirects IPv4 VIPs only"},
		"loopback vip":  {in: "vips: [127.0.0.1]\n", wantErr: "vips[0]"},
		"duplicate vip": {in: "vips: [203.0.113.10, 203.0.113.10]\n", wantErr: "vips[1]: 203.0.113.10 repeats vips[0]"},
		"mss too small": {in: "netd:\n  mss: 100\n", wantErr: "netd.mss"},
		"mss too large": {in: "netd:\n  mss: 65496\n", wantErr: "netd.mss: 65496 is outside 536..65495"},
		"mss jumbo":     {in: "netd:\n  mss: 8940\nvips: []\n", want: Config{MetricsAddress: DefaultMetricsAddress, Gateway: model.Gateway{Tunnel: "tunl0", Tunnel6: "ip6tnl0", MSS: 8940, VIPs: []netip.Addr{}}}},
		"mss off": {in: "netd:\n  mss: \"off\"\nvips: []\n",
			want: Config{MetricsAddress: DefaultMetricsAddress, Gateway: model.Gateway{Tunnel: "tunl0", Tunnel6: "ip6tnl0", MSSPolicy: model.MSSPolicy{Mode: model.MSSOff}, VIPs: []netip.Addr{}}}},
		"mss auto with mtu and gue": {in: "netd:\n  mss: auto\n  mtu: 9000\n  gue: {port: 6080}\nvips: []\n",
			want: Config{MetricsAddress: DefaultMetricsAddress, Gateway: model.Gateway{Tunnel: "tunl0", Tunnel6: "ip6tnl0", MSSPolicy: model.MSSPolicy{Mode: model.MSSFromMTU, MTU: 9000}, GUEPort: 6080, VIPs: []netip.Addr{}}}},
		"mss unknown word":      {in: "netd:\n  mss: max\n", wantErr: `netd.mss: "max" is neither a number nor auto or off`},
		"mss wrong type":        {in: "netd:\n  mss: [1]\n", wantErr: "netd.mss"},
		"mtu too small":         {in: "netd:\n  mtu: 500\n", wantErr: "netd.mtu: 500 is outside 576..65535"},
		"mtu with fixed mss":    {in: "netd:\n  mss: 1400\n  mtu: 9000\n", wantErr: "netd.mtu: only used with netd.mss: auto"},
		"gue port zero":         {in: "netd:\n  gue: {port: 0}\n", wantErr: "netd.gue.port: 0 is outside 1..65535"},
		"gue unknown field":     {in: "netd:\n  gue: {port: 6080, csum: true}\n", wantErr: `unknown field "csum"`},
		"mss zero":              {in: "netd:\n  mss: 0\n", wantErr: "netd.mss"},
		"tunnel too long":       {in: "netd:\n  tunnel: tunnel-012345\n", wantErr: "netd.tunnel"},
		"tunnel with slash":     {in: "netd:\n  tunnel: a/b\n", wantErr: "netd.tunnel"},
		"tunnel dotdot":         {in: "netd:\n  tunnel: ..\n", wantErr: "netd.tunnel"},
		"metrics not host:port": {in: "netd:\n  metricsAddress: localhost\n", wantErr: "netd.metricsAddress"},
		"metrics host not ip":   {in: "netd:\n  metricsAddress: example.com:1\n", wantErr: "netd.metricsAddress"},
		"vips wrong type":       {in: "vips: 203.0.113.10\n", wantErr: "parse"},
		"ports": {
			in: `
vips: [203.0.113.10, 203.0.113.11]
ports:
- {vip: 203.0.113.11, port: 443, targetPort: 10443}
- {vip: 203.0.113.10, protocol: tcp, port: 80, targetPort: 8080}
`,
			want: Config{MetricsAddress: DefaultMetricsAddress, Gateway: model.Gateway{
				Tunnel: "tunl0", Tunnel6: "ip6tnl0", MSSPolicy: model.MSSPolicy{Mode: model.MSSFromMTU},
				VIPs: []netip.Addr{netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("203.0.113.11")},
				Ports: []model.PortMap{
					{VIP: netip.MustParseAddr("203.0.113.10"), Protocol: "tcp", Port: 80, TargetPort: 8080},
					{VIP: netip.MustParseAddr("203.0.113.11"), Protocol: "tcp", Port: 443, TargetPort: 10443},
				},
			}},
		},
		"port vip not in vips": {in: portsFile("{vip: 203.0.113.99, port: 80, targetPort: 8080}"),
			wantErr: "ports[1].vip: 203.0.113.99 is not one of vips"},
		"port vip not an address": {in: portsFile("{vip: x, port: 80, targetPort: 8080}"), wantErr: `ports[1].vip: "x"`},
		"port vip missing":        {in: portsFile("{port: 80, targetPort: 8080}"), wantErr: "ports[1].vip"},
		"port protocol udp": {in: portsFile("{vip: 203.0.113.10, protocol: udp, port: 53, targetPort: 5353}"),
			wantErr: `ports[1].protocol: "udp" is not supported`},
		"port zero":         {in: portsFile("{vip: 203.0.113.10, port: 0, targetPort: 8080}"), wantErr: "ports[1].port: 0 is outside 1..65535"},
		"port missing":      {in: portsFile("{vip: 203.0.113.10, targetPort: 8080}"), wantErr: "ports[1].port"},
		"port too large":    {in: portsFile("{vip: 203.0.113.10, port: 65536, targetPort: 8080}"), wantErr: "ports[1].port"},
		"targetPort zero":   {in: portsFile("{vip: 203.0.113.10, port: 81, targetPort: 0}"), wantErr: "ports[1].targetPort: 0 is outside 1..65535"},
		"targetPort large":  {in: portsFile("{vip: 203.0.113.10, port: 81, targetPort: 70000}"), wantErr: "ports[1].targetPort"},
		"targetPort = port": {in: portsFile("{vip: 203.0.113.10, port: 81, targetPort: 81}"), wantErr: "ports[1].targetPort: 81 equals port"},
		"port repeated": {in: portsFile("{vip: 203.0.113.10, port: 443, targetPort: 9443}"),
			wantErr: "ports[1].port: tcp 203.0.113.10:443 repeats ports[0]"},
		"port unknown field": {in: portsFile("{vip: 203.0.113.10, port: 81, target: 8081}"), wantErr: `unknown field "target"`},
		"port negative":      {in: portsFile("{vip: 203.0.113.10, port: -1, targetPort: 8081}"), wantErr: "ports[1].port"},
		"listener ports": {
			in: "netd:\n  listenerPorts: [{port: 443, targetPort: 10443}, {port: 80, targetPort: 10080}]\n",
			want: Config{MetricsAddress: DefaultMetricsAddress, Gateway: model.Gateway{Tunnel: "tunl0", Tunnel6: "ip6tnl0", MSSPolicy: model.MSSPolicy{Mode: model.MSSFromMTU}},
				ListenerPorts: map[uint16]uint16{80: 10080, 443: 10443}},
		},
		"listener port zero": {in: "netd:\n  listenerPorts: [{port: 0, targetPort: 10443}]\n",
			wantErr: "netd.listenerPorts[0].port: 0 is outside 1..65535"},
		"listener target large": {in: "netd:\n  listenerPorts: [{port: 443, targetPort: 65536}]\n",
			wantErr: "netd.listenerPorts[0].targetPort"},
		"listener to itself": {in: "netd:\n  listenerPorts: [{port: 443, targetPort: 443}]\n",
			wantErr: "netd.listenerPorts[0].targetPort: 443 equals port"},
		"listener repeated": {in: "netd:\n  listenerPorts: [{port: 443, targetPort: 10443}, {port: 443, targetPort: 9443}]\n",
			wantErr: "netd.listenerPorts[1].port: 443 repeats netd.listenerPorts[0]"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got.MetricsAddress != tc.want.MetricsAddress || got.Gateway.Tunnel != tc.want.Gateway.Tunnel ||
				got.Gateway.MSS != tc.want.Gateway.MSS || !slices.Equal(got.Gateway.VIPs, tc.want.Gateway.VIPs) ||
				!slices.Equal(got.Gateway.Ports, tc.want.Gateway.Ports) || !maps.Equal(got.ListenerPorts, tc.want.ListenerPorts) {
				t.Fatalf("Parse = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// portsFile is a valid file with one good mapping (ports[0]) followed by
// entry, which is ports[1].
func portsFile(entry string) string {
	return "vips: [203.0.113.10]\nports:\n- {vip: 203.0.113.10, port: 443, targetPort: 10443}\n- " + entry + "\n"
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netd.yaml")
	if err := os.WriteFile(path, []byte("vips: [x]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "vips[0]") {
		t.Fatalf("Load err = %v, want it to name %s and vips[0]", err, path)
	}
}

// FuzzParse checks that Parse never panics and that whatever it accepts is
// a usable gateway model.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"vips: [203.0.113.10]\n",
		"netd:\n  metricsAddress: 127.0.0.1:9101\n  tunnel: tunl0\n  mss: 1440\nvips: [203.0.113.10, 203.0.113.11]\n",
		"netd: {mss: 99999}\n",
		"vips: [\"::1\"]\n",
		"vips: [\"2001:db8::1\", 203.0.113.10]\n",
		"netd:\n  tunnel: \"\\u0000\"\n",
		"- a\n- b\n",
		"vips: [1.2.3.4, 1.2.3.4]\n",
		"vips: [203.0.113.10]\nports:\n- {vip: 203.0.113.10, port: 443, targetPort: 10443}\n",
		"vips: [203.0.113.10]\nports:\n- {vip: 203.0.113.10, protocol: tcp, port: 80, targetPort: 8080}\n- {vip: 203.0.113.10, port: 443, targetPort: 10443}\n",
		"vips: [203.0.113.10]\nports:\n- {vip: 203.0.113.11, port: 443, targetPort: 10443}\n",
		"vips: [203.0.113.10]\nports:\n- {vip: 203.0.113.10, protocol: udp, port: 65535, targetPort: 1}\n",
		"vips: [203.0.113.10]\nports: [{vip: 203.0.113.10, port: 99999999999, targetPort: -3}]\n",
		"ports: {vip: 1.2.3.4}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			return
		}
		g := cfg.Gateway
		if g.Tunnel == "" || len(g.AddrLabel()) > 15 || strings.ContainsAny(g.Tunnel, "/\x00") {
			t.Fatalf("accepted bad tunnel %q", g.Tunnel)
		}
		if g.MSSPolicy.Mode == model.MSSFixed && g.MSS < MinMSS || g.MSS > MaxMSS || g.MSSPolicy.Mode != model.MSSFixed && g.MSS != 0 {
			t.Fatalf("accepted MSS %d (%+v)", g.MSS, g.MSSPolicy)
		}
		if m := g.MSSPolicy.MTU; m != 0 && (m < MinMTU || m > MaxMTU || g.MSSPolicy.Mode != model.MSSFromMTU) {
			t.Fatalf("accepted MTU %d (%+v)", m, g.MSSPolicy)
		}
		for i, v := range g.VIPs {
			if v.Is4In6() || v.Zone() != "" || (i > 0 && g.VIPs[i-1].Compare(v) >= 0) {
				t.Fatalf("VIPs not sorted unique plain addresses: %v", g.VIPs)
			}
		}
		for i, p := range g.Ports {
			if !slices.Contains(g.VIPs, p.VIP) || p.Protocol != model.ProtocolTCP || p.Port == 0 || p.TargetPort == 0 || p.Port == p.TargetPort {
				t.Fatalf("accepted bad port mapping %s (VIPs %v)", p, g.VIPs)
			}
			if i > 0 && model.ComparePortMaps(g.Ports[i-1], p) >= 0 {
				t.Fatalf("ports not sorted unique: %v", g.Ports)
			}
		}
	})
}

// TestDeployedFileParses: the file deploy/netd ships in its ConfigMap is
// valid, serves no VIPs of its own (they come from the API server) and
// redirects no port: the L7 gateways bind each VIP:port themselves.
func TestDeployedFileParses(t *testing.T) {
	cfg, err := Load(filepath.Join("..", "..", "deploy", "netd", "netd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Gateway.VIPs) != 0 || len(cfg.Gateway.Ports) != 0 || len(cfg.ListenerPorts) != 0 ||
		cfg.Gateway.MSSPolicy.Mode != model.MSSFromMTU || cfg.Gateway.GUEPort != 0 {
		t.Errorf("deploy/netd/netd.yaml: %+v", cfg)
	}
}
