package bgp

import (
	"context"
	"fmt"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"github.com/prometheus/client_golang/prometheus"
)

// sessionStates are the FSM states tlb_bgp_session_state reports, one
// series each per peer, so an alert or a panel can match on the state.
var sessionStates = []string{"idle", "connect", "active", "opensent", "openconfirm", "established"}

// listTimeout bounds the GoBGP read made during a scrape.
const listTimeout = 5 * time.Second

// peerCollector exports each configured peer's session state, when it last
// changed and how many prefixes GoBGP advertises to it, read at scrape
// time. Peers come from the configuration only, so the series are bounded
// by it.
type peerCollector struct {
	s                       *Speaker
	state, since, advertise *prometheus.Desc
}

func registerPeerCollector(reg prometheus.Registerer, s *Speaker) error {
	if reg == nil {
		return nil
	}
	c := peerCollector{s: s,
		state: prometheus.NewDesc("tlb_bgp_session_state",
			"1 for the BGP FSM state the session with the peer is in, 0 for the other states.", []string{"peer", "state"}, nil),
		since: prometheus.NewDesc("tlb_bgp_session_last_change_timestamp_seconds",
			"Unix time the session with the peer entered its current state.", []string{"peer"}, nil),
		advertise: prometheus.NewDesc("tlb_bgp_peer_advertised_prefixes",
			"Prefixes GoBGP currently advertises to the peer (after the export policy); 0 while the speaker is stopped.", []string{"peer"}, nil),
	}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("register bgp peer metrics: %w", err)
	}
	return nil
}

// Describe implements prometheus.Collector.
func (c peerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.state
	ch <- c.since
	ch <- c.advertise
}

// Collect implements prometheus.Collector.
func (c peerCollector) Collect(ch chan<- prometheus.Metric) {
	adv := c.s.advertised()
	for _, p := range c.s.Peers() {
		for _, st := range sessionStates {
			v := 0.0
			if st == p.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, v, p.Address, st)
		}
		if !p.Since.IsZero() {
			ch <- prometheus.MustNewConstMetric(c.since, prometheus.GaugeValue, float64(p.Since.UnixNano())/1e9, p.Address)
		}
		ch <- prometheus.MustNewConstMetric(c.advertise, prometheus.GaugeValue, float64(adv[p.Address]), p.Address)
	}
}

// advertised asks GoBGP how many prefixes it advertises to each peer. It
// returns nothing while the speaker is not started or if GoBGP fails. It
// holds s.mu so that Stop never stops GoBGP under a pending read (a
// stopped GoBGP never answers).
func (s *Speaker) advertised() map[string]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]uint64{}
	if !s.started {
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	err := s.srv.ListPeer(ctx, &api.ListPeerRequest{EnableAdvertised: true}, func(p *api.Peer) {
		var n uint64
		for _, af := range p.GetAfiSafis() {
			n += af.GetState().GetAdvertised()
		}
		out[p.GetConf().GetNeighborAddress()] = n
	})
	if err != nil {
		s.log.Warn("list bgp peers for metrics", "err", err)
	}
	return out
}
