package console

import (
	"context"
	"time"

	"github.com/tlbproject/tlb/api"
)

// APISource reads what the API server knows. It returns an error when
// the API server cannot be read; the panels built from it then show a
// banner.
type APISource interface {
	ReadAPI(ctx context.Context) (APIState, error)
}

// ComponentSource finds the components the console is pointed at and
// reads the status endpoints of one. ListEndpoints' error says why some may
// be missing (what it found is still read); an unreachable component is
// reported in its own Component (Err), not as an error of the source.
type ComponentSource interface {
	ListEndpoints(ctx context.Context) ([]Endpoint, error)
	ReadComponent(ctx context.Context, ep Endpoint) Component
}

// IPVSReader reads the IPVS services of the host the console runs on
// (tlb/status.Read over a netlink handle: real servers with weights and
// connection counts), for a console run on a director.
type IPVSReader interface {
	ReadIPVS(ctx context.Context) ([]api.IPVSService, error)
}

// APIState is the part of the API server the console shows.
type APIState struct {
	Pools    []Pool
	Clusters []L4Cluster
	Services []Service
	// Events are the Warning Events of any namespace.
	Events []Event
	Leases []Lease
	// GatewaysInstalled is false when the Gateway API CRD is absent.
	GatewaysInstalled bool
	Gateways          []Gateway
}

// Pool is a VIPPool: its CIDRs, the L4 cluster serving it, its use.
type Pool struct {
	Name      string
	CIDRs     []string
	L4Cluster string
	Used      int64
	Free      int64
}

// L4Cluster is a group of directors serving one environment.
type L4Cluster struct {
	Name        string
	Environment string
	Capacity    int32
	Used        int64
	Free        int64
}

// Service is a Service TLB serves, with what it asked for and got.
type Service struct {
	Namespace string
	Name      string
	// VIPs are the addresses of status.loadBalancer.ingress.
	VIPs []string
	// Requested is what its tlb.io/ annotations ask for (environment,
	// pool, address), for display.
	Requested string
	Pool      string // tlb.io/assigned-pool
	L4Cluster string // tlb.io/assigned-l4-cluster
	Ports     []string
	// L7 is set when the Service opts into the L7 tier.
	L7 *L7Intent
}

// L7Intent is what an L7 Service's annotations route: group, hosts,
// path prefix, and the name (only) of its TLS Secret.
type L7Intent struct {
	Group      string
	Hosts      []string
	PathPrefix string
	TLSSecret  string
}

// Event is one Warning Event.
type Event struct {
	Namespace string
	Kind      string
	Name      string
	Reason    string
	Message   string
	Count     int32
	Last      time.Time
}

// Lease is a coordination Lease (leader election of ipam).
type Lease struct {
	Namespace string
	Name      string
	Holder    string
	Renewed   time.Time
}

// Gateway is a Gateway API Gateway with its addresses.
type Gateway struct {
	Namespace string
	Name      string
	Class     string
	Addresses []string
	// Programmed is the status of its Programmed condition ("" if none).
	Programmed string
}

// Role is the kind of component a status endpoint belongs to.
type Role string

// The roles the console reads.
const (
	RoleDirector Role = "director"
	RoleNetd     Role = "netd"
	RoleL7       Role = "l7"
)

// Component is what one component's status endpoints said.
type Component struct {
	Role Role
	Name string
	URL  string
	// Err says why the component could not be read ("" when it was).
	Err string
	// Took is how long the answer shown took. Slow is set when it took
	// longer than the collector's SlowAfter, or when the component has
	// not answered within the page's budget: Pending says for how long
	// its read had then run, Age how old the (last good) data shown is,
	// and NoData that there is none yet.
	Took    time.Duration
	Slow    bool
	Pending time.Duration
	Age     time.Duration
	NoData  bool
	// RateOver is the time between the two samples the rates below come
	// from (0: one sample only, no rates yet).
	RateOver time.Duration
	// VIPRates is the director's traffic per VIP (all ports), per second.
	VIPRates map[string]VIPRate
	// RejectedRecent and NACKsRecent are the rejected configs and the
	// NACKs between the two samples.
	RejectedRecent float64
	NACKsRecent    []Sample
	// Snapshots are the versions an l7 server serves now.
	Snapshots []SnapshotVersion
	// Envoys are the gateways (xDS nodes) an l7 server feeds over SotW
	// streams, with the versions each acknowledged (Envoy's delta streams
	// are not listed: an Envoy's own stats say what it applied).
	Envoys []EnvoyNode
	// Listeners are the listeners an Envoy reports (role envoy), by
	// address, with their active connections.
	Listeners []Sample
	// EnvoyState is an Envoy's own view (role envoy): its xDS
	// connection, server state and the config versions it applied.
	EnvoyState  *EnvoyStats
	Ready       bool
	ReadyReason string
	// GTM is the director's per-VIP health answer (/vip/), by VIP.
	GTM map[string]GTMAnswer
	// Sessions are the director's BGP sessions.
	Sessions  []BGPSession
	Announced float64
	// RealServers are the real servers the director health checks.
	RealServers []RealServer
	// Traffic are the director's per-VIP series (tlb_director_vip_*),
	// by VIP; empty when the director does not export them.
	Traffic map[string][]Sample
	// Rejected counts rejected configs: the director's and netd's files,
	// the L7 server's resource sets that failed validation.
	Rejected float64
	// Bound are the VIPs netd has bound (when it exports them per VIP).
	Bound []string
	// VIPsBound is netd's count of bound VIPs (-1 when unknown).
	VIPsBound float64
	// Certificates are the L7 server's certificates and days left.
	Certificates []Certificate
	// NACKs are the xDS responses clients rejected, by group and type.
	NACKs []Sample
	// ConfigProblems is the L7 server's count of problems in its last config.
	ConfigProblems float64
	// Routes are the routes the L7 server serves (its GET /routes; none
	// from an l7 that does not serve it).
	Routes []api.RouteRow
}

// GTMAnswer is a director's answer for one VIP, as GTM reads it.
type GTMAnswer struct {
	Up   bool
	Line string
}

// BGPSession is one BGP peer of a director.
type BGPSession struct {
	Peer        string
	Established bool
	// BFD is the BFD state with the peer (up, down, init, admindown), ""
	// when the director runs no BFD with it.
	BFD string
}

// RealServer is a real server and whether it passes its health checks.
type RealServer struct {
	Address string
	Up      bool
}

// Certificate is one certificate an L7 server serves.
type Certificate struct {
	Name     string
	DaysLeft float64
}

// Sample is one series of a metric: its name, its labels other than the
// one it is grouped by, and its value.
type Sample struct {
	Metric string
	Labels string
	Value  float64
}
