package bgp

import (
	"testing"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"google.golang.org/protobuf/proto"
)

func TestAPIPeer(t *testing.T) {
	base := func() *api.Peer {
		return &api.Peer{
			Conf:      &api.PeerConf{NeighborAddress: "198.18.0.1", PeerAsn: 64500},
			Timers:    &api.Timers{Config: &api.TimersConfig{HoldTime: 3, KeepaliveInterval: 1, ConnectRetry: 1}},
			Transport: &api.Transport{RemotePort: 179},
			AfiSafis: []*api.AfiSafi{{
				Config:       &api.AfiSafiConfig{Family: ipv4Unicast(), Enabled: true},
				PrefixLimits: &api.PrefixLimit{Family: ipv4Unicast(), MaxPrefixes: DefaultMaxPrefixes},
			}},
		}
	}
	cases := map[string]struct {
		cfg      Config
		peer     PeerConfig
		password string
		want     func() *api.Peer
	}{
		"defaults": {peer: PeerConfig{Address: "198.18.0.1", ASN: 64500}, want: base},
		"md5 and source": {peer: PeerConfig{Address: "198.18.0.1", ASN: 64500, LocalAddress: "198.18.0.2"}, password: "pw",
			want: func() *api.Peer {
				p := base()
				p.Conf.AuthPassword = "pw"
				p.Transport.LocalAddress = "198.18.0.2"
				return p
			}},
		"multihop": {peer: PeerConfig{Address: "198.18.0.1", ASN: 64500, EBGPMultihopTTL: 2},
			want: func() *api.Peer {
				p := base()
				p.EbgpMultihop = &api.EbgpMultihop{Enabled: true, MultihopTtl: 2}
				return p
			}},
		"gtsm one hop": {peer: PeerConfig{Address: "198.18.0.1", ASN: 64500, TTLSecurityHops: 1},
			want: func() *api.Peer {
				p := base()
				p.TtlSecurity = &api.TtlSecurity{Enabled: true, TtlMin: 255}
				return p
			}},
		"timers and max prefixes": {peer: PeerConfig{Address: "198.18.0.1", ASN: 64500, HoldTimeSeconds: 9, KeepaliveSeconds: 3, MaxPrefixes: 10},
			want: func() *api.Peer {
				p := base()
				p.Timers.Config.HoldTime, p.Timers.Config.KeepaliveInterval = 9, 3
				p.AfiSafis[0].PrefixLimits.MaxPrefixes = 10
				return p
			}},
		"graceful restart": {cfg: Config{GracefulRestart: true}, peer: PeerConfig{Address: "198.18.0.1", ASN: 64500},
			want: func() *api.Peer {
				p := base()
				p.GracefulRestart = &api.GracefulRestart{Enabled: true, RestartTime: 120, LocalRestarting: true, DeferralTime: 5}
				p.AfiSafis[0].MpGracefulRestart = &api.MpGracefulRestart{Config: &api.MpGracefulRestartConfig{Enabled: true}}
				return p
			}},
		"IPv6 unicast beside IPv4, graceful restart for both": {cfg: Config{GracefulRestart: true, NextHopIPv6: "2001:db8::2"}, peer: PeerConfig{Address: "198.18.0.1", ASN: 64500},
			want: func() *api.Peer {
				p := base()
				p.AfiSafis = append(p.AfiSafis, &api.AfiSafi{
					Config:       &api.AfiSafiConfig{Family: ipv6Unicast(), Enabled: true},
					PrefixLimits: &api.PrefixLimit{Family: ipv6Unicast(), MaxPrefixes: DefaultMaxPrefixes},
				})
				p.GracefulRestart = &api.GracefulRestart{Enabled: true, RestartTime: 120, LocalRestarting: true, DeferralTime: 5}
				for _, af := range p.AfiSafis {
					af.MpGracefulRestart = &api.MpGracefulRestart{Config: &api.MpGracefulRestartConfig{Enabled: true}}
				}
				return p
			}},
		"graceful restart time": {cfg: Config{GracefulRestart: true, GracefulRestartSeconds: 30}, peer: PeerConfig{Address: "198.18.0.1", ASN: 64500},
			want: func() *api.Peer {
				p := base()
				p.GracefulRestart = &api.GracefulRestart{Enabled: true, RestartTime: 30, LocalRestarting: true, DeferralTime: 5}
				p.AfiSafis[0].MpGracefulRestart = &api.MpGracefulRestart{Config: &api.MpGracefulRestartConfig{Enabled: true}}
				return p
			}},
	}
	for name, tc := range cases {
		cfg := tc.cfg
		cfg.Peers = []PeerConfig{tc.peer}
		cfg = cfg.Defaulted()
		got := apiPeer(cfg, cfg.Peers[0], tc.password)
		if want := tc.want(); !proto.Equal(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", name, got, want)
		}
	}
}

// TestMaxPrefixTearsDownTheSession: a router that sends more prefixes
// than allowed loses the session.
func TestMaxPrefixTearsDownTheSession(t *testing.T) {
	r := newReceiver(t)
	cfg := testConfig(r)
	cfg.Peers[0].MaxPrefixes = 2
	s := startSpeaker(t, cfg)
	r.announce(t, "10.1.0.0/16")
	r.announce(t, "10.2.0.0/16")
	time.Sleep(time.Second)
	if !s.Established() {
		t.Fatalf("session dropped at the limit (2 of 2 prefixes): %v", s.Peers())
	}
	r.announce(t, "10.3.0.0/16")
	deadline := time.Now().Add(10 * time.Second)
	for s.Established() {
		if time.Now().After(deadline) {
			t.Fatalf("session still established after the router sent 3 prefixes with maxPrefixes 2: %v", s.Peers())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("session after the 3rd prefix: %v", s.Peers())
}
