package bgp

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Defaults applied by Config.Defaulted.
const (
	// DefaultHoldTimeSeconds is the hold time offered to peers. Without BFD
	// (PeerConfig.BFD) a dead director is detected by its router within
	// this many seconds, so it bounds the failover time.
	DefaultHoldTimeSeconds = 3
	// DefaultKeepaliveSeconds is the keepalive interval (a third of the hold time).
	DefaultKeepaliveSeconds = 1
	// DefaultConnectRetrySeconds is how long to wait before redialling a peer.
	DefaultConnectRetrySeconds = 1
	// DefaultMaxPrefixes is how many prefixes a peer may send before the
	// session is torn down. The director imports nothing, so a router that
	// sends more than this is misconfigured.
	DefaultMaxPrefixes = 1000
	// DefaultPeerPort is the BGP port peers are dialled on.
	DefaultPeerPort = 179
	// DefaultGracefulRestartSeconds is the restart time offered with
	// graceful restart: how long a router keeps a silent director's routes
	// (marked stale) waiting for it to come back.
	DefaultGracefulRestartSeconds = 120
	// maxGracefulRestartSeconds is the largest restart time the 12-bit
	// field of the capability carries (RFC 4724 section 3).
	maxGracefulRestartSeconds = 4095
	// DefaultAPIAddress is where the optional GoBGP gRPC API listens.
	DefaultAPIAddress = "127.0.0.1:50051"
	// NoListen as ListenPort means the speaker only dials out.
	NoListen = -1
)

// Config is the BGP configuration of one director. It is read from YAML
// (keys are the json tags, as sigs.k8s.io/yaml maps them). It holds no
// secret: MD5 passwords are read from the files the peers name.
type Config struct {
	// LocalASN is the director's autonomous system number.
	LocalASN uint32 `json:"localASN"`
	// RouterID is the director's BGP identifier, an IPv4 address.
	RouterID string `json:"routerID"`
	// ListenPort is the TCP port to accept sessions on; NoListen (-1, the
	// default when zero) makes the director only dial out.
	ListenPort int32 `json:"listenPort,omitempty"`
	// NextHop is the next hop announced for every prefix. Empty means the
	// local address of each session.
	NextHop string `json:"nextHop,omitempty"`
	// NextHopIPv6 is the next hop of IPv6 prefixes: an IPv6 address of
	// this director (global, not link-local) that the routers reach. IPv6
	// prefixes go over the IPv4 sessions as MP-BGP (AFI/SAFI
	// ipv6-unicast), which have no IPv6 address of their own to send, so
	// it is required when AllowedPrefixes holds an IPv6 range; with it
	// every session also negotiates ipv6-unicast.
	NextHopIPv6 string `json:"nextHopIPv6,omitempty"`
	// GracefulRestart enables BGP graceful restart (RFC 4724) on every peer.
	// Off by default: a stopping director withdraws its routes and drains.
	// On, a stopping director keeps its routes at the routers (no
	// withdrawal, no NOTIFICATION) for GracefulRestartSeconds, so a restart
	// costs no route; a director that does not come back in time loses its
	// routes only then.
	GracefulRestart bool `json:"gracefulRestart,omitempty"`
	// GracefulRestartSeconds is the restart time advertised with graceful
	// restart, 1..4095; DefaultGracefulRestartSeconds when zero.
	GracefulRestartSeconds uint32 `json:"gracefulRestartSeconds,omitempty"`
	// AllowedPrefixes are the VIP ranges this director may announce: a
	// prefix is announced only if it lies inside one of them.
	AllowedPrefixes []string `json:"allowedPrefixes"`
	// Advertisements set the communities, local preference and
	// aggregation of the routes inside some VIP ranges.
	Advertisements []AdvertisementConfig `json:"advertisements,omitempty"`
	// API configures GoBGP's own gRPC API, off by default.
	API APIConfig `json:"api,omitempty"`
	// Peers are the routers to announce to. It may be empty in
	// Kubernetes, where BGPPeers add to them.
	Peers []PeerConfig `json:"peers,omitempty"`
}

// APIConfig configures GoBGP's gRPC API. It has no authentication, so it is
// only ever bound to a loopback address.
type APIConfig struct {
	// Enabled turns the API on.
	Enabled bool `json:"enabled,omitempty"`
	// Address is a loopback host:port; DefaultAPIAddress when empty.
	Address string `json:"address,omitempty"`
}

// PeerConfig is one BGP neighbour (usually the top-of-rack router).
type PeerConfig struct {
	// Name, when set, names the peer in errors (a BGPPeer's is named
	// after it).
	Name string `json:"name,omitempty"`
	// Address is the neighbour's IPv4 address.
	Address string `json:"address"`
	// ASN is the neighbour's autonomous system number.
	ASN uint32 `json:"asn"`
	// Port is the neighbour's BGP port; DefaultPeerPort when zero.
	Port uint16 `json:"port,omitempty"`
	// LocalAddress is the source address to dial from; empty lets the
	// kernel choose.
	LocalAddress string `json:"localAddress,omitempty"`
	// PasswordFile names a file holding the TCP MD5 password (RFC 2385);
	// surrounding white space is trimmed. The password is never logged.
	PasswordFile string `json:"passwordFile,omitempty"`
	// Password is the TCP MD5 password itself, for peers that do not come
	// from a file (a BGPPeer's passwordSecretRef). Exclusive with
	// PasswordFile; never read from or written to YAML.
	Password Password `json:"-"`
	// HoldTimeSeconds is the hold time; DefaultHoldTimeSeconds when zero.
	HoldTimeSeconds uint32 `json:"holdTimeSeconds,omitempty"`
	// KeepaliveSeconds is the keepalive interval; DefaultKeepaliveSeconds
	// when zero. It must be below the hold time.
	KeepaliveSeconds uint32 `json:"keepaliveSeconds,omitempty"`
	// ConnectRetrySeconds is the redial interval; DefaultConnectRetrySeconds when zero.
	ConnectRetrySeconds uint32 `json:"connectRetrySeconds,omitempty"`
	// EBGPMultihopTTL, when set, allows an eBGP neighbour that many hops away.
	EBGPMultihopTTL uint8 `json:"ebgpMultihopTTL,omitempty"`
	// TTLSecurityHops, when set, enables GTSM (RFC 5082): packets from the
	// neighbour must arrive with TTL >= 256 - hops. Exclusive with EBGPMultihopTTL.
	TTLSecurityHops uint8 `json:"ttlSecurityHops,omitempty"`
	// MaxPrefixes tears the session down when the neighbour sends more
	// prefixes; DefaultMaxPrefixes when zero.
	MaxPrefixes uint32 `json:"maxPrefixes,omitempty"`
	// BFD turns on BFD with the peer (bfdconfig.go); off by default.
	BFD BFDConfig `json:"bfd,omitzero"`
	// NodeSelectors choose the nodes whose director peers with this
	// neighbour: a node matching any of them does. None means every node.
	// One configuration then serves every rack, each director peering
	// with its own rack's routers (see Speaker.SetNodeLabels).
	NodeSelectors []metav1.LabelSelector `json:"nodeSelectors,omitempty"`
}

// Parse reads a YAML Config, rejecting unknown fields, applies defaults and
// validates it.
func Parse(data []byte) (Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return Config{}, fmt.Errorf("parse bgp config: %w", err)
	}
	c = c.Defaulted()
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Defaulted returns a copy of c with every unset field set to its default.
func (c Config) Defaulted() Config {
	if c.ListenPort == 0 {
		c.ListenPort = NoListen
	}
	if c.GracefulRestart && c.GracefulRestartSeconds == 0 {
		c.GracefulRestartSeconds = DefaultGracefulRestartSeconds
	}
	if c.API.Enabled && c.API.Address == "" {
		c.API.Address = DefaultAPIAddress
	}
	c.Peers = defaultedPeers(c.Peers)
	return c
}

// defaultedPeers returns a copy of peers with every unset field set to
// its default.
func defaultedPeers(in []PeerConfig) []PeerConfig {
	peers := make([]PeerConfig, len(in))
	for i, p := range in {
		if p.Port == 0 {
			p.Port = DefaultPeerPort
		}
		if p.HoldTimeSeconds == 0 {
			p.HoldTimeSeconds = DefaultHoldTimeSeconds
		}
		if p.KeepaliveSeconds == 0 {
			p.KeepaliveSeconds = DefaultKeepaliveSeconds
		}
		if p.ConnectRetrySeconds == 0 {
			p.ConnectRetrySeconds = DefaultConnectRetrySeconds
		}
		if p.MaxPrefixes == 0 {
			p.MaxPrefixes = DefaultMaxPrefixes
		}
		p.BFD = p.BFD.defaulted()
		peers[i] = p
	}
	return peers
}

// Validate checks a defaulted Config. Its errors name the offending field.
func (c Config) Validate() error {
	var ps problems
	c.checkSpeaker(&ps)
	c.checkAllowedPrefixes(&ps)
	if len(ps) == 0 {
		// The advertisements are checked against valid allowed ranges.
		_, errs := parseAdvertisements(c.Advertisements, c.allowedRanges(), advertisementField(c.Advertisements))
		ps = append(ps, errs...)
	}
	c.checkAPI(&ps)
	c.checkPeers(&ps)
	return errors.Join(ps...)
}

// problems collects what Validate finds, in the order it finds it.
type problems []error

// add records that field is wrong, as the message format and args say.
func (ps *problems) add(field, format string, args ...any) {
	*ps = append(*ps, fmt.Errorf("bgp config: %s: %s", field, fmt.Sprintf(format, args...)))
}

// checkAPI checks that an enabled GoBGP API listens on loopback only.
func (c Config) checkAPI(ps *problems) {
	if !c.API.Enabled {
		return
	}
	if err := checkLoopback(c.API.Address); err != nil {
		ps.add("api.address", "%v", err)
	}
}

// checkPeers checks each peer. The list may be empty: in Kubernetes the
// BGPPeers supply the peers (Speaker.SetPeers).
func (c Config) checkPeers(ps *problems) {
	c.checkPeerList(ps, c.Peers)
}

// checkPeerList checks each of peers on its own; a peer address listed
// twice is reported at its second listing.
func (c Config) checkPeerList(ps *problems, peers []PeerConfig) {
	seen := map[string]bool{}
	for i, p := range peers {
		f := func(name string) string { return fmt.Sprintf("peers[%d].%s", i, name) }
		if p.Name != "" {
			f = func(name string) string { return fmt.Sprintf("peer %s: %s", p.Name, name) }
		}
		c.checkPeerIdentity(ps, f, p, seen)
		c.checkPeerSession(ps, f, p)
		p.BFD.check(ps, f, p)
		for j, sel := range p.NodeSelectors {
			if _, err := metav1.LabelSelectorAsSelector(&sel); err != nil {
				ps.add(f(fmt.Sprintf("nodeSelectors[%d]", j)), "%v", err)
			}
		}
	}
}

// checkPeerIdentity checks a peer's address, ASN and local address; seen
// holds the peer addresses met so far.
func (c Config) checkPeerIdentity(ps *problems, f func(string) string, p PeerConfig, seen map[string]bool) {
	a, err := netip.ParseAddr(p.Address)
	switch {
	case err != nil || !a.Is4() || a.IsUnspecified():
		ps.add(f("address"), "%q is not an IPv4 address", p.Address)
	case seen[a.String()]:
		ps.add(f("address"), "%s is listed twice", a)
	default:
		seen[a.String()] = true
	}
	if p.ASN == 0 {
		ps.add(f("asn"), "must be set")
	}
	if p.LocalAddress != "" {
		if la, err := netip.ParseAddr(p.LocalAddress); err != nil || !la.Is4() {
			ps.add(f("localAddress"), "%q is not an IPv4 address", p.LocalAddress)
		}
	}
}

// checkPeerSession checks a peer's timers, TTL options and password file.
func (c Config) checkPeerSession(ps *problems, f func(string) string, p PeerConfig) {
	if p.HoldTimeSeconds < 3 {
		ps.add(f("holdTimeSeconds"), "%d is below the BGP minimum of 3", p.HoldTimeSeconds)
	}
	if p.KeepaliveSeconds >= p.HoldTimeSeconds {
		ps.add(f("keepaliveSeconds"), "%d must be below holdTimeSeconds %d", p.KeepaliveSeconds, p.HoldTimeSeconds)
	}
	if p.EBGPMultihopTTL != 0 && p.TTLSecurityHops != 0 {
		ps.add(f("ttlSecurityHops"), "cannot be combined with ebgpMultihopTTL")
	}
	if p.TTLSecurityHops != 0 && p.ASN == c.LocalASN {
		ps.add(f("ttlSecurityHops"), "applies to eBGP peers only (asn equals localASN)")
	}
	if p.PasswordFile != "" && strings.TrimSpace(p.PasswordFile) != p.PasswordFile {
		ps.add(f("passwordFile"), "path has surrounding white space")
	}
	if p.Password != "" && p.PasswordFile != "" {
		ps.add(f("passwordFile"), "cannot be combined with a password from a Secret")
	}
	if len(p.Password) > maxPasswordBytes {
		ps.add(f("password"), "is longer than the %d bytes TCP MD5 allows", maxPasswordBytes)
	}
}

// checkLoopback refuses any API address that is not a literal loopback IP.
func checkLoopback(hostport string) error {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return fmt.Errorf("%q is not ip:port: %w", hostport, err)
	}
	if !ap.Addr().IsLoopback() {
		return fmt.Errorf("%s is not a loopback address; the GoBGP API has no authentication", ap.Addr())
	}
	return nil
}

// readPassword returns the MD5 password of peer i: its Password, or
// the content of its PasswordFile.
func readPassword(i int, p PeerConfig) (string, error) {
	if p.Password != "" {
		return string(p.Password), nil
	}
	if p.PasswordFile == "" {
		return "", nil
	}
	b, err := os.ReadFile(p.PasswordFile)
	if err != nil {
		// The path is not secret; the content is never shown.
		return "", fmt.Errorf("bgp config: peers[%d].passwordFile: read password for peer %s: %w", i, p.Address, err)
	}
	pw := strings.TrimSpace(string(b))
	if pw == "" {
		return "", fmt.Errorf("bgp config: peers[%d].passwordFile: %s is empty", i, p.PasswordFile)
	}
	if len(pw) > maxPasswordBytes {
		return "", fmt.Errorf("bgp config: peers[%d].passwordFile: password is longer than the %d bytes TCP MD5 allows", i, maxPasswordBytes)
	}
	return pw, nil
}
