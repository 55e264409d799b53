package bgp

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"testing"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"github.com/osrg/gobgp/v3/pkg/server"
	"google.golang.org/protobuf/types/known/anypb"
)

// receiver is a second, independent GoBGP server on loopback that plays
// the router: it accepts the Speaker's session and shows what it learned.
type receiver struct {
	srv  *server.BgpServer
	port int
}

const (
	receiverAddr = "127.0.0.1"
	speakerAddr  = "127.0.0.2"
	receiverASN  = 64500
	speakerASN   = 64512
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", receiverAddr+":0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }

// newReceiver starts a router-like GoBGP that accepts a session from
// speakerAddr and imports everything.
func newReceiver(t *testing.T) *receiver {
	t.Helper()
	ctx := context.Background()
	port := freePort(t)
	srv := server.NewBgpServer(server.LoggerOption(newGobgpLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))))
	go srv.Serve()
	if err := srv.StartBgp(ctx, &api.StartBgpRequest{Global: &api.Global{
		Asn: receiverASN, RouterId: "198.18.255.1", ListenPort: int32(port), ListenAddresses: []string{receiverAddr},
	}}); err != nil {
		t.Fatalf("start receiver: %v", err)
	}
	t.Cleanup(srv.Stop)
	if err := srv.AddPeer(ctx, &api.AddPeerRequest{Peer: &api.Peer{
		Conf:      &api.PeerConf{NeighborAddress: speakerAddr, PeerAsn: speakerASN},
		Timers:    &api.Timers{Config: &api.TimersConfig{HoldTime: 3, KeepaliveInterval: 1, ConnectRetry: 1}},
		Transport: &api.Transport{PassiveMode: true, LocalAddress: receiverAddr},
		AfiSafis:  []*api.AfiSafi{{Config: &api.AfiSafiConfig{Family: ipv4Unicast(), Enabled: true}}},
	}}); err != nil {
		t.Fatalf("receiver: add peer: %v", err)
	}
	return &receiver{srv: srv, port: port}
}

// routes returns prefix -> next hop of every route the receiver learned.
func (r *receiver) routes(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := r.srv.ListPath(context.Background(), &api.ListPathRequest{TableType: api.TableType_GLOBAL, Family: ipv4Unicast()}, func(d *api.Destination) {
		for _, p := range d.Paths {
			out[d.Prefix] = nextHop(p.Pattrs)
		}
	})
	if err != nil {
		t.Fatalf("receiver: list paths: %v", err)
	}
	return out
}

func nextHop(attrs []*anypb.Any) string {
	for _, a := range attrs {
		var nh api.NextHopAttribute
		if a.MessageIs(&nh) && a.UnmarshalTo(&nh) == nil {
			return nh.NextHop
		}
	}
	return ""
}

// waitRoutes waits until the receiver's table equals want.
func (r *receiver) waitRoutes(t *testing.T, want map[string]string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var got map[string]string
	for time.Now().Before(deadline) {
		got = r.routes(t)
		if equalMaps(got, want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("receiver routes = %v, want %v", got, want)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// announce sends one route from the receiver to the speaker.
func (r *receiver) announce(t *testing.T, prefix string) {
	t.Helper()
	p := netip.MustParsePrefix(prefix)
	nlri, _ := anypb.New(&api.IPAddressPrefix{Prefix: p.Addr().String(), PrefixLen: uint32(p.Bits())})
	origin, _ := anypb.New(&api.OriginAttribute{Origin: 0})
	nh, _ := anypb.New(&api.NextHopAttribute{NextHop: receiverAddr})
	if _, err := r.srv.AddPath(context.Background(), &api.AddPathRequest{Path: &api.Path{
		Family: ipv4Unicast(), Nlri: nlri, Pattrs: []*anypb.Any{origin, nh},
	}}); err != nil {
		t.Fatalf("receiver: add path %s: %v", prefix, err)
	}
}

// testConfig is a Speaker config peering with r.
func testConfig(r *receiver) Config {
	return Config{
		LocalASN:        speakerASN,
		RouterID:        "198.18.255.2",
		AllowedPrefixes: []string{"203.0.113.0/24", "198.51.100.0/25"},
		Peers: []PeerConfig{{
			Address: receiverAddr, ASN: receiverASN, Port: uint16(r.port), LocalAddress: speakerAddr,
		}},
	}
}

func startSpeaker(t *testing.T, cfg Config) *Speaker {
	t.Helper()
	s, err := NewSpeaker(cfg, testLogger(t), nil)
	if err != nil {
		t.Fatalf("new speaker: %v", err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("start speaker: %v", err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	waitEstablished(t, s)
	return s
}

func waitEstablished(t *testing.T, s *Speaker) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if s.Established() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("session never established: %v", s.Peers())
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

func strs(ps []netip.Prefix) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	sort.Strings(out)
	return out
}
