package pipeline

import (
	"context"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/l7/model"
)

// Publisher takes a configuration and says what became of it: the
// Pipeline, or a Merger's door for one source (Merger.For).
type Publisher interface {
	Publish(ctx context.Context, cfg model.Config) Report
}

// Readiness receives whether the control plane has published a complete
// config. *obs.Server implements it.
type Readiness interface {
	SetReady(ready bool, reason string)
}

// Merger joins the configurations of several sources (the DSL directory,
// the Kubernetes L7 controller) into the one configuration the pipeline
// resolves: each source replaces only its own part. Nothing is published
// until every source has delivered a complete first part (the directory
// read, the informers synced): a control plane that restarts while a
// source is unreachable sends its gateways nothing, so they keep what they
// have, instead of a config that lacks that source's part.
type Merger struct {
	mu      sync.Mutex
	next    Publisher
	ready   Readiness
	log     *slog.Logger
	sources []string
	parts   map[string]model.Config
	synced  *prometheus.GaugeVec
	// published is set once the union has been published.
	published bool
}

// NewMerger returns a Merger publishing to next once each of sources has
// published. ready is told when that happens (nil: nobody); the gauge
// tlb_l7_source_synced{source} goes to reg (nil: none).
func NewMerger(next Publisher, ready Readiness, log *slog.Logger, reg prometheus.Registerer, sources ...string) *Merger {
	m := &Merger{next: next, ready: ready, log: log, sources: slices.Sorted(slices.Values(sources)), parts: map[string]model.Config{},
		synced: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "tlb_l7_source_synced",
			Help: "1 once a config source has been read completely (directory read, informers synced); nothing is published before all are."}, []string{"source"})}
	if reg != nil {
		reg.MustRegister(m.synced)
	}
	for _, s := range m.sources {
		m.synced.WithLabelValues(s).Set(0)
	}
	if ready != nil {
		ready.SetReady(false, "waiting for "+joinNames(m.sources))
	}
	return m
}

// For returns the Publisher a named source uses.
func (m *Merger) For(source string) Publisher { return sourcePublisher{m: m, source: source} }

// Waiting returns the sources that have not published yet.
func (m *Merger) Waiting() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waiting()
}

func (m *Merger) waiting() []string {
	var out []string
	for _, s := range m.sources {
		if _, ok := m.parts[s]; !ok {
			out = append(out, s)
		}
	}
	return out
}

// Publish replaces source's part and, once every source has published,
// publishes the union. Before that it returns an empty Report.
func (m *Merger) Publish(ctx context.Context, source string, cfg model.Config) Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.parts[source] = cfg
	m.synced.WithLabelValues(source).Set(1)
	if w := m.waiting(); len(w) > 0 {
		m.log.Info("config source read; nothing is published until the others are", "source", source, "waitingFor", w)
		if m.ready != nil {
			m.ready.SetReady(false, "waiting for "+joinNames(w))
		}
		return Report{}
	}
	rep := m.next.Publish(ctx, Union(m.parts))
	if m.ready != nil && !m.published {
		m.ready.SetReady(true, "")
	}
	m.published = true
	return rep
}

func joinNames(ns []string) string { return strings.Join(ns, ", ") }

// Union joins parts in the order of their source names, so the result is
// the same whatever order the sources published in.
func Union(parts map[string]model.Config) model.Config {
	if len(parts) == 1 {
		for _, p := range parts {
			return p // one source: its part is the union, not copied
		}
	}
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	sort.Strings(names)
	var out model.Config
	for _, n := range names {
		p := parts[n]
		out.Gateways = append(out.Gateways, p.Gateways...)
		out.Services = append(out.Services, p.Services...)
		out.Certificates = append(out.Certificates, p.Certificates...)
		out.Interceptors = append(out.Interceptors, p.Interceptors...)
	}
	return out
}

type sourcePublisher struct {
	m      *Merger
	source string
}

func (p sourcePublisher) Publish(ctx context.Context, cfg model.Config) Report {
	return p.m.Publish(ctx, p.source, cfg)
}
