package bgp

import (
	api "github.com/osrg/gobgp/v3/api"
)

// grDeferralSeconds bounds how long a restarting speaker waits for the
// routers' End-of-RIB before it sends its routes anyway.
const grDeferralSeconds = 5

// ipv4Unicast returns a fresh family message (GoBGP may keep what it is given).
func ipv4Unicast() *api.Family {
	return &api.Family{Afi: api.Family_AFI_IP, Safi: api.Family_SAFI_UNICAST}
}

// ipv6Unicast returns a fresh IPv6 unicast family message.
func ipv6Unicast() *api.Family {
	return &api.Family{Afi: api.Family_AFI_IP6, Safi: api.Family_SAFI_UNICAST}
}

// apiPeer turns one defaulted PeerConfig into GoBGP's peer message. The
// session carries ipv4-unicast, and ipv6-unicast too (MP-BGP) when the
// director announces IPv6 prefixes (Config.NextHopIPv6 set); the prefix
// limit and graceful restart apply to each family.
func apiPeer(c Config, p PeerConfig, password string) *api.Peer {
	peer := &api.Peer{
		Conf: &api.PeerConf{
			NeighborAddress: p.Address,
			PeerAsn:         p.ASN,
			AuthPassword:    password,
		},
		Timers: &api.Timers{Config: &api.TimersConfig{
			HoldTime:          uint64(p.HoldTimeSeconds),
			KeepaliveInterval: uint64(p.KeepaliveSeconds),
			ConnectRetry:      uint64(p.ConnectRetrySeconds),
			// Send updates at once: the announce-to-route time is what
			// the failover promise is measured in.
			MinimumAdvertisementInterval: 0,
		}},
		Transport: &api.Transport{
			LocalAddress: p.LocalAddress,
			RemotePort:   uint32(p.Port),
			PassiveMode:  false,
		},
		AfiSafis: []*api.AfiSafi{{
			Config: &api.AfiSafiConfig{Family: ipv4Unicast(), Enabled: true},
			PrefixLimits: &api.PrefixLimit{
				Family:      ipv4Unicast(),
				MaxPrefixes: p.MaxPrefixes,
			},
		}},
	}
	if p.EBGPMultihopTTL != 0 {
		peer.EbgpMultihop = &api.EbgpMultihop{Enabled: true, MultihopTtl: uint32(p.EBGPMultihopTTL)}
	}
	if p.TTLSecurityHops != 0 {
		peer.TtlSecurity = &api.TtlSecurity{Enabled: true, TtlMin: 256 - uint32(p.TTLSecurityHops)}
	}
	if c.announcesIPv6() {
		peer.AfiSafis = append(peer.AfiSafis, &api.AfiSafi{
			Config:       &api.AfiSafiConfig{Family: ipv6Unicast(), Enabled: true},
			PrefixLimits: &api.PrefixLimit{Family: ipv6Unicast(), MaxPrefixes: p.MaxPrefixes},
		})
	}
	if c.GracefulRestart {
		// LocalRestarting sets the Restart State bit and the Forwarding
		// State bit of the family: IPVS stays programmed across a
		// restart, so forwarding is preserved, and the router keeps the
		// stale routes until this speaker's End-of-RIB.
		peer.GracefulRestart = &api.GracefulRestart{Enabled: true, RestartTime: c.GracefulRestartSeconds,
			LocalRestarting: true, DeferralTime: grDeferralSeconds}
		for _, af := range peer.AfiSafis {
			af.MpGracefulRestart = &api.MpGracefulRestart{Config: &api.MpGracefulRestartConfig{Enabled: true}}
		}
	}
	return peer
}
