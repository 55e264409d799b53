package xds

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// Node metadata keys a client sets in its bootstrap.
const (
	// MetaKind is "gateway" (Envoy, the default) or "grpc" (proxyless).
	MetaKind = "tlb.kind"
	// MetaSchema must equal the server's Generation, unless the node
	// declares MetaBootstrap.
	MetaSchema = "tlb.schema"
	// MetaBootstrap is the BootstrapGeneration of the l7 that wrote a
	// gateway's bootstrap. A gateway that declares it is admitted when it
	// equals the server's, whatever its MetaSchema: its bootstrap fits
	// this server's resources, and the one stream replaces every resource
	// the gateway holds with this server's.
	MetaBootstrap = "tlb.bootstrap"
)

// Key returns the snapshot key of a kind of client in a group.
func Key(kind translate.Kind, group string) string { return string(kind) + "/" + group }

// nodeKey maps a node to its snapshot key: kind from metadata, group from
// node.cluster.
type nodeKey struct{}

func (nodeKey) ID(n *core.Node) string { return Key(kindOf(n), n.GetCluster()) }

// Options say what one Server serves.
type Options struct {
	// Group is the one gateway group served: its gateways and its
	// proxyless gRPC clients. Nothing of another group is built or sent.
	Group string
	// TrustDomain is the SPIFFE trust domain of client certificates on
	// TLS streams (default "tlb.io"); see Identity.
	TrustDomain string
	// Kinds are the kinds of client served (default: gateways only). A
	// gateway pod's l7 serves the Envoy beside it; proxyless gRPC clients
	// are served by an l7 that lists translate.GRPC too.
	Kinds []translate.Kind
}

// serves reports whether the server builds resources for kind.
func (o Options) serves(kind translate.Kind) bool { return slices.Contains(o.Kinds, kind) }

// Server is the L7 xDS control plane of one gateway group: versions,
// snapshots and the ADS service. It serves resource sets already
// translated and validated (l7/xdsbuild); it does not resolve or
// translate.
type Server struct {
	log        *slog.Logger
	cache      *kindCaches
	xds        serverv3.Server
	metrics    *metrics
	now        func() time.Time
	opts       Options
	generation string
	// bootstrapGeneration is BootstrapGeneration(), computed once.
	bootstrapGeneration string

	mu       sync.Mutex                   // serialises Apply
	versions map[string]map[string]string // key -> type URL -> version

	streams *streamLog
	// served are the snapshots last set, by key, from which the next
	// ones are built.
	served map[string]*snapshot
}

// New returns a Server for opts.Group. Metrics go to reg (nil: none); now
// is the clock. Nothing is served until the first Apply: streams of the
// group wait (their clients keep what they have), others are refused.
func New(ctx context.Context, log *slog.Logger, reg prometheus.Registerer, now func() time.Time, opts Options) *Server {
	if opts.TrustDomain == "" {
		opts.TrustDomain = DefaultTrustDomain
	}
	if len(opts.Kinds) == 0 {
		opts.Kinds = []translate.Kind{translate.Gateway}
	}
	s := &Server{
		log:        log,
		metrics:    newMetrics(reg),
		now:        now,
		opts:       opts,
		generation: Generation(), bootstrapGeneration: BootstrapGeneration(),
		versions: map[string]map[string]string{},
		served:   map[string]*snapshot{},
	}
	s.cache = newKindCaches(cacheLogger{log})
	s.streams = newStreamLog(s)
	registerStreamCollector(reg, s.streams, opts.Group)
	s.metrics.generation.WithLabelValues(s.generation, opts.Group).Set(1)
	s.xds = serverv3.NewServer(ctx, s.cache.mux, s.streams)
	return s
}

// Register adds the aggregated discovery service (SotW and delta) to g.
func (s *Server) Register(g *grpc.Server) {
	discovery.RegisterAggregatedDiscoveryServiceServer(g, s.xds)
}

// Generation returns the schema generation this server serves.
func (s *Server) Generation() string { return s.generation }

// Group returns the gateway group this server serves.
func (s *Server) Group() string { return s.opts.Group }

// Kinds returns the kinds of client served, one snapshot key each.
func (s *Server) Kinds() []translate.Kind { return slices.Clone(s.opts.Kinds) }

// Set is the validated resource set of one snapshot key, with the
// content sum of each resource (validate.Memo.Set), in set order.
type Set struct {
	Resources translate.Resources
	Sums      map[resource.Type][]validate.Sum
}

// Update is one change of the group's resource sets.
type Update struct {
	// Start is when the change began (before resolve): the origin of the
	// build and push durations and of the ACK delays.
	Start time.Time
	// Problems is how many problems the resolve found.
	Problems int
	// Sets are the validated sets by key; a served key absent from Sets
	// and Invalid is no longer served.
	Sets map[string]Set
	// Invalid are the keys whose set failed validation, and why: they
	// keep their snapshot.
	Invalid map[string]error
}

// Result says what Apply did.
type Result struct {
	// Invalid are the update's invalid keys and those whose snapshot
	// could not be built or set; each kept its previous snapshot.
	Invalid map[string]error
	// Changed lists the keys whose snapshot was swapped.
	Changed []string
	// Removed lists the keys no longer served.
	Removed []string
}

// Apply swaps the snapshots whose sets changed. A key that is invalid
// keeps the snapshot it had; a served key absent from u is removed.
func (s *Server) Apply(ctx context.Context, u Update) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.metrics.problems.Set(float64(u.Problems))
	type built struct {
		snap     *snapshot
		versions map[string]string
	}
	next := map[string]built{}
	res := Result{Invalid: map[string]error{}}
	for _, key := range slices.Sorted(maps.Keys(u.Invalid)) {
		res.Invalid[key] = u.Invalid[key]
		s.metrics.rejected.WithLabelValues(key).Inc()
	}
	for _, key := range slices.Sorted(maps.Keys(u.Sets)) {
		set := u.Sets[key]
		snap, vers, err := nextSnapshot(s.generation, s.served[key], set.Resources, set.Sums)
		if err != nil {
			res.Invalid[key] = fmt.Errorf("build snapshot of %s: %w", key, err)
			continue
		}
		next[key] = built{snap, vers}
	}
	s.metrics.build.Observe(s.now().Sub(u.Start).Seconds())

	for _, key := range slices.Sorted(maps.Keys(next)) {
		b := next[key]
		if maps.Equal(s.versions[key], b.versions) {
			continue // nothing changed for this key
		}
		// Before the snapshot is set: its responses may go out at once.
		prev := s.streams.published(key, u.Start)
		if err := s.cache.SetSnapshot(ctx, key, b.snap); err != nil {
			s.streams.unpublish(key, prev)
			res.Invalid[key] = fmt.Errorf("set snapshot of %s: %w", key, err)
			continue
		}
		s.metrics.version.DeletePartialMatch(prometheus.Labels{"key": key})
		for typ, v := range b.versions {
			s.metrics.version.WithLabelValues(key, typ, v).Set(1)
		}
		s.metrics.publishes.WithLabelValues(key).Inc()
		s.versions[key] = b.versions
		s.served[key] = b.snap
		res.Changed = append(res.Changed, key)
	}
	for _, key := range slices.Sorted(maps.Keys(s.versions)) {
		if _, ok := next[key]; ok || res.Invalid[key] != nil {
			continue
		}
		s.cache.ClearSnapshot(key)
		s.metrics.version.DeletePartialMatch(prometheus.Labels{"key": key})
		delete(s.versions, key)
		delete(s.served, key)
		res.Removed = append(res.Removed, key)
	}
	if len(res.Changed) > 0 || len(res.Removed) > 0 {
		s.metrics.push.Observe(s.now().Sub(u.Start).Seconds())
	}
	return res
}

// Versions returns the served versions: key -> type URL -> version.
func (s *Server) Versions() map[string]map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]map[string]string, len(s.versions))
	for k, v := range s.versions {
		out[k] = maps.Clone(v)
	}
	return out
}

// currentVersion returns the served version of a type for key.
func (s *Server) currentVersion(key, typ string) string {
	snap, err := s.cache.GetSnapshot(key)
	if err != nil {
		return ""
	}
	return snap.GetVersion(typ)
}

// cacheLogger adapts slog to go-control-plane's logger. Its debug and
// info lines go to debug level, and are formatted only when enabled (they
// list resource names and cost real time at scale).
type cacheLogger struct{ log *slog.Logger }

func (l cacheLogger) logf(level slog.Level, f string, a []any) {
	if l.log.Enabled(context.Background(), level) {
		l.log.Log(context.Background(), level, fmt.Sprintf(f, a...))
	}
}

func (l cacheLogger) Debugf(f string, a ...any) { l.logf(slog.LevelDebug, f, a) }
func (l cacheLogger) Infof(f string, a ...any)  { l.logf(slog.LevelDebug, f, a) }
func (l cacheLogger) Warnf(f string, a ...any)  { l.logf(slog.LevelWarn, f, a) }
func (l cacheLogger) Errorf(f string, a ...any) { l.logf(slog.LevelError, f, a) }
