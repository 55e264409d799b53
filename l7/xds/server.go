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
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// Node metadata keys a client sets in its bootstrap.
const (
	// MetaKind is "gateway" (Envoy, the default) or "grpc" (proxyless).
	MetaKind = "tlb.kind"
	// MetaSchema must equal the server's Generation.
	MetaSchema = "tlb.schema"
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
	// Resolve are the operator's rules for conflicts (model.Resolve).
	Resolve model.Options
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

// Server is the L7 xDS control plane of one gateway group.
type Server struct {
	log        *slog.Logger
	cache      *kindCaches
	xds        serverv3.Server
	metrics    *metrics
	now        func() time.Time
	opts       Options
	generation string

	mu       sync.Mutex                   // serialises Publish
	versions map[string]map[string]string // key -> type URL -> version

	streams *streamLog
	// memos check each key's resource sets, each resource once per
	// content; served are the snapshots last set, from which the next
	// ones are built. Both by key.
	memos  map[string]*validate.Memo
	served map[string]*snapshot
	// resolver and translations redo only what the services that changed
	// need.
	resolver     *model.Resolver
	translations *translate.Cache
}

// New returns a Server for opts.Group. Metrics go to reg (nil: none); now
// is the clock. Nothing is served until the first Publish: streams of the
// group wait (their clients keep what they have), others are refused.
func New(ctx context.Context, log *slog.Logger, reg prometheus.Registerer, now func() time.Time, opts Options) *Server {
	if opts.TrustDomain == "" {
		opts.TrustDomain = DefaultTrustDomain
	}
	if len(opts.Kinds) == 0 {
		opts.Kinds = []translate.Kind{translate.Gateway}
	}
	s := &Server{
		log:          log,
		metrics:      newMetrics(reg),
		now:          now,
		opts:         opts,
		generation:   Generation(),
		versions:     map[string]map[string]string{},
		memos:        map[string]*validate.Memo{},
		served:       map[string]*snapshot{},
		resolver:     model.NewResolver(),
		translations: translate.NewCache(),
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

// Report says what a Publish did.
type Report struct {
	// Problems are per-object errors; those objects were left out.
	Problems []model.Problem
	// Invalid maps a snapshot key to why its resource set failed
	// validation; that key kept its previous snapshot.
	Invalid map[string]error
	// Changed lists the keys whose snapshot was swapped.
	Changed []string
	// Removed lists the keys no longer served.
	Removed []string
	// Resolved is the resolved config the publish translated, for the
	// consumers after it (the rate limit service's configuration), so
	// that no one resolves it again. Read only.
	Resolved *model.Resolved
}

// Generation returns the schema generation this server serves.
func (s *Server) Generation() string { return s.generation }

// Group returns the gateway group this server serves.
func (s *Server) Group() string { return s.opts.Group }

// Publish makes cfg the desired state of the server's group: resolve,
// translate for each kind of client, validate, and swap only the
// snapshots that changed. The result is a function of cfg alone (and the
// build): objects with problems are left out, conflicts are settled by
// claim order. A set that fails validation is never sent; its key keeps
// the previous snapshot. cfg must be complete: the caller publishes only
// once every source has been read.
func (s *Server) Publish(ctx context.Context, cfg model.Config) Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := s.now()
	var rep Report
	resolved := s.resolver.Resolve(cfg, s.opts.Resolve)
	rep.Problems, rep.Resolved = resolved.Problems, &resolved
	s.metrics.problems.Set(float64(len(resolved.Problems)))

	g := s.opts.Group
	shared := s.translations.Shared(resolved, g)
	sets := map[string]translate.Resources{}
	for _, kind := range s.opts.Kinds {
		sets[Key(kind, g)] = s.translations.ForKind(resolved, g, kind, shared)
	}
	s.apply(ctx, start, sets, &rep)
	s.translations.Sweep()
	return rep
}

// apply validates every key's resource set and swaps the snapshots that
// changed. A set that fails validation is never sent: its key keeps the
// snapshot it had. Keys absent from sets (and not invalid) are removed.
func (s *Server) apply(ctx context.Context, start time.Time, sets map[string]translate.Resources, rep *Report) {
	type built struct {
		snap     *snapshot
		versions map[string]string
	}
	next := map[string]built{}
	rep.Invalid = map[string]error{}
	for _, key := range slices.Sorted(maps.Keys(sets)) {
		set := sets[key]
		memo := s.memos[key]
		if memo == nil {
			memo = validate.NewMemo()
			s.memos[key] = memo
		}
		sums, err := memo.Set(set)
		if err != nil {
			rep.Invalid[key] = fmt.Errorf("validate resources of %s: %w", key, err)
			s.metrics.rejected.WithLabelValues(key).Inc()
			continue
		}
		snap, vers, err := nextSnapshot(s.generation, s.served[key], set, sums)
		if err != nil {
			rep.Invalid[key] = fmt.Errorf("build snapshot of %s: %w", key, err)
			continue
		}
		next[key] = built{snap, vers}
	}
	s.metrics.build.Observe(s.now().Sub(start).Seconds())

	for _, key := range slices.Sorted(maps.Keys(next)) {
		b := next[key]
		if maps.Equal(s.versions[key], b.versions) {
			continue // nothing changed for this key
		}
		// Before the snapshot is set: its responses may go out at once.
		prev := s.streams.published(key, start)
		if err := s.cache.SetSnapshot(ctx, key, b.snap); err != nil {
			s.streams.unpublish(key, prev)
			rep.Invalid[key] = fmt.Errorf("set snapshot of %s: %w", key, err)
			continue
		}
		s.metrics.version.DeletePartialMatch(prometheus.Labels{"key": key})
		for typ, v := range b.versions {
			s.metrics.version.WithLabelValues(key, typ, v).Set(1)
		}
		s.metrics.publishes.WithLabelValues(key).Inc()
		s.versions[key] = b.versions
		s.served[key] = b.snap
		rep.Changed = append(rep.Changed, key)
	}
	for _, key := range slices.Sorted(maps.Keys(s.versions)) {
		if _, ok := next[key]; ok || rep.Invalid[key] != nil {
			continue
		}
		s.cache.ClearSnapshot(key)
		s.metrics.version.DeletePartialMatch(prometheus.Labels{"key": key})
		delete(s.versions, key)
		delete(s.served, key)
		delete(s.memos, key)
		rep.Removed = append(rep.Removed, key)
	}
	if len(rep.Changed) > 0 || len(rep.Removed) > 0 {
		s.metrics.push.Observe(s.now().Sub(start).Seconds())
	}
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
