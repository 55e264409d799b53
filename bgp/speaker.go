package bgp

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"github.com/osrg/gobgp/v3/pkg/server"
	"github.com/prometheus/client_golang/prometheus"
)

// Announcer is what the director needs from BGP: announce exactly a set of
// prefixes (the whole desired set each time), withdraw everything, and say
// whether any router is listening. *Speaker implements it.
type Announcer interface {
	// Announce makes the announced set equal to prefixes.
	Announce(ctx context.Context, prefixes []netip.Prefix) error
	// WithdrawAll withdraws every announced prefix.
	WithdrawAll(ctx context.Context) error
	// Established reports whether at least one session is Established.
	Established() bool
}

var _ Announcer = (*Speaker)(nil)

// pathTable is the part of GoBGP that adds and removes our paths. It is
// *server.BgpServer in production; tests wrap it to inject failures.
type pathTable interface {
	AddPath(context.Context, *api.AddPathRequest) (*api.AddPathResponse, error)
	DeletePath(context.Context, *api.DeletePathRequest) error
}

// Speaker is one director's BGP speaker: an in-process GoBGP server with
// safe policies, its peers, and the set of prefixes it announces.
type Speaker struct {
	cfg       Config
	allowed   []netip.Prefix
	passwords map[string]string // by peer address; never logged
	log       *slog.Logger
	metrics   *metrics
	now       func() time.Time // stamps PeerStatus.Since

	srv   *server.BgpServer
	paths pathTable
	bfd   *bfdPeers // BFD sessions of the peers in GoBGP that enable it (bfdpeer.go)

	mu      sync.Mutex // serialises Announce/WithdrawAll/Stop
	started bool
	// peersAdded is set once the peers are managed in GoBGP: at Start,
	// or with graceful restart at the first Announce or WithdrawAll.
	peersAdded bool
	// nodeLabels are the labels of the node, which select the peers
	// (PeerConfig.NodeSelectors); active are the peers in GoBGP.
	nodeLabels map[string]string
	active     map[string]PeerConfig
	announced  map[netip.Prefix]announcement
	// requested is the last set Announce was given, before the
	// advertisements aggregate it; SetAdvertisements sends it again.
	requested []netip.Prefix
	advs      []advertisement

	stateMu sync.Mutex
	states  map[string]PeerStatus // by peer address
	cancel  context.CancelFunc
}

// PeerStatus is the session state of one peer.
type PeerStatus struct {
	// Address is the peer's address.
	Address string
	// ASN is the peer's AS number.
	ASN uint32
	// State is the BGP FSM state: idle, connect, active, opensent,
	// openconfirm or established.
	State string
	// Since is when the session entered State (when the peer was added,
	// for the first state).
	Since time.Time
}

// NewSpeaker validates cfg (after applying defaults), reads the peers'
// password files and registers the metrics on reg (nil: no metrics). It
// does not touch the network; Start does.
func NewSpeaker(cfg Config, log *slog.Logger, reg prometheus.Registerer) (*Speaker, error) {
	cfg = cfg.Defaulted()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pws := map[string]string{}
	for i, p := range cfg.Peers {
		pw, err := readPassword(i, p)
		if err != nil {
			return nil, err
		}
		pws[p.Address] = pw
	}
	advs, _ := parseAdvertisements(cfg.Advertisements, cfg.allowedRanges(), advertisementField(cfg.Advertisements))
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	bp, err := newBFDPeers(log, reg)
	if err != nil {
		return nil, err
	}
	s := &Speaker{
		cfg:       cfg,
		allowed:   cfg.allowedRanges(),
		passwords: pws,
		log:       log,
		metrics:   m,
		bfd:       bp,
		now:       time.Now,
		announced: map[netip.Prefix]announcement{},
		advs:      advs,
		states:    map[string]PeerStatus{},
		active:    map[string]PeerConfig{},
	}
	if err := registerPeerCollector(reg, s); err != nil {
		return nil, err
	}
	return s, nil
}

// Start starts GoBGP, installs the import and export policies, then adds
// the peers. Sessions come up in the background; watch Established or Peers.
func (s *Speaker) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("start bgp speaker: already started")
	}
	opts := []server.ServerOption{server.LoggerOption(newGobgpLogger(s.log))}
	if s.cfg.API.Enabled {
		opts = append(opts, server.GrpcListenAddress(s.cfg.API.Address))
	}
	srv := server.NewBgpServer(opts...)
	go srv.Serve()

	global := &api.Global{
		Asn:        s.cfg.LocalASN,
		RouterId:   s.cfg.RouterID,
		ListenPort: s.cfg.ListenPort,
	}
	if err := srv.StartBgp(ctx, &api.StartBgpRequest{Global: global}); err != nil {
		srv.Stop()
		return fmt.Errorf("start gobgp as %d router-id %s: %w", s.cfg.LocalASN, s.cfg.RouterID, err)
	}
	if err := installPolicies(ctx, srv, s.allowed); err != nil {
		srv.Stop()
		return fmt.Errorf("start bgp speaker: %w", err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	if err := srv.WatchEvent(wctx, &api.WatchEventRequest{Peer: &api.WatchEventRequest_Peer{}}, s.onEvent); err != nil {
		cancel()
		srv.Stop()
		return fmt.Errorf("watch bgp peer events: %w", err)
	}
	s.bfd.start(srv)
	s.srv, s.paths, s.cancel, s.started = srv, srv, cancel, true
	if s.cfg.GracefulRestart {
		// The peers wait for the first announcement (addPeersLocked),
		// so that the End-of-RIB a router gets after a restart follows
		// the whole set of routes: the stale routes still wanted are
		// refreshed, not flushed and then announced again.
		return nil
	}
	if err := s.addPeersLocked(ctx); err != nil {
		s.bfd.stop()
		cancel()
		srv.Stop()
		s.started = false
		return err
	}
	return nil
}

// addPeersLocked adds the peers the node's labels select to GoBGP, the
// first time; SetNodeLabels and SetPeers change them later.
func (s *Speaker) addPeersLocked(ctx context.Context) error {
	if s.peersAdded {
		return nil
	}
	s.peersAdded = true
	return s.syncPeersLocked(ctx)
}

// Stop withdraws every prefix, closes the sessions (sending a Cease) and
// stops GoBGP. A stopped Speaker cannot be started again.
//
// With graceful restart Stop withdraws nothing and sends no NOTIFICATION,
// either of which would make the routers drop the routes at once: it
// leaves the sessions to close with the process, which must exit next.
// The routers then keep the routes, marked stale, for the restart time
// (RFC 4724).
func (s *Speaker) Stop(ctx context.Context) error {
	var err error
	if !s.cfg.GracefulRestart {
		err = s.WithdrawAll(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return err
	}
	s.bfd.stop()
	s.cancel()
	if s.cfg.GracefulRestart {
		s.log.Info("bgp speaker stopping for a graceful restart: routes left at the routers",
			"announced", len(s.announced), "restartTime", s.cfg.GracefulRestartSeconds)
	} else {
		s.srv.Stop()
	}
	s.started = false
	s.stateMu.Lock()
	now := s.now()
	for addr, st := range s.states {
		if st.State != "idle" {
			st.State, st.Since = "idle", now
		}
		s.states[addr] = st
		s.metrics.sessionUp.WithLabelValues(addr).Set(0)
	}
	s.stateMu.Unlock()
	return err
}

// Peers returns the state of every configured peer, sorted by address.
func (s *Speaker) Peers() []PeerStatus {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	out := make([]PeerStatus, 0, len(s.states))
	for _, st := range s.states {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b PeerStatus) int { return comparePeerAddr(a.Address, b.Address) })
	return out
}

// Established reports whether at least one session is Established.
func (s *Speaker) Established() bool {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	for _, st := range s.states {
		if st.State == "established" {
			return true
		}
	}
	return false
}

func (s *Speaker) setState(addr string, asn uint32, state string) {
	s.stateMu.Lock()
	prev := s.states[addr]
	since := prev.Since
	if prev.State != state {
		since = s.now()
	}
	s.states[addr] = PeerStatus{Address: addr, ASN: asn, State: state, Since: since}
	s.stateMu.Unlock()
	up := 0.0
	if state == "established" {
		up = 1
	}
	s.metrics.sessionUp.WithLabelValues(addr).Set(up)
	if prev.State != "" && prev.State != state && (prev.State == "established" || state == "established") {
		s.log.Info("bgp session state changed", "peer", addr, "from", prev.State, "to", state)
	}
}

// onEvent records peer state changes. Only the address, AS and state are
// read: the event also carries the MD5 password, which must not leak.
func (s *Speaker) onEvent(r *api.WatchEventResponse) {
	pe := r.GetPeer()
	if pe == nil || pe.Type != api.WatchEventResponse_PeerEvent_STATE {
		return
	}
	st := pe.GetPeer().GetState()
	if st == nil {
		return
	}
	s.stateMu.Lock()
	_, known := s.states[st.NeighborAddress]
	s.stateMu.Unlock()
	if !known {
		return // a removed peer's last events
	}
	s.setState(st.NeighborAddress, st.PeerAsn, fsmState(st.SessionState))
}

func fsmState(s api.PeerState_SessionState) string {
	switch s {
	case api.PeerState_IDLE:
		return "idle"
	case api.PeerState_CONNECT:
		return "connect"
	case api.PeerState_ACTIVE:
		return "active"
	case api.PeerState_OPENSENT:
		return "opensent"
	case api.PeerState_OPENCONFIRM:
		return "openconfirm"
	case api.PeerState_ESTABLISHED:
		return "established"
	}
	return "unknown"
}
