package serve

import (
	"context"
	"sort"
	"sync"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/xds"
)

// Merger joins the configurations of several sources (the DSL directory,
// the Kubernetes L7 controller) into the one configuration the xDS server
// publishes: each source replaces only its own part. Objects of the same
// name from two sources are settled by the server's conflict rules (the
// one already served wins).
type Merger struct {
	mu     sync.Mutex
	server Publisher
	parts  map[string]model.Config
}

// NewMerger returns a Merger publishing to server.
func NewMerger(server Publisher) *Merger {
	return &Merger{server: server, parts: map[string]model.Config{}}
}

// For returns the Publisher a named source uses.
func (m *Merger) For(source string) Publisher { return sourcePublisher{m: m, source: source} }

// Publish replaces source's part and publishes the union.
func (m *Merger) Publish(ctx context.Context, source string, cfg model.Config) xds.Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.parts[source] = cfg
	return m.server.Publish(ctx, Union(m.parts))
}

// Union joins parts in the order of their source names, so the result is
// the same whatever order the sources published in.
func Union(parts map[string]model.Config) model.Config {
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
	}
	return out
}

type sourcePublisher struct {
	m      *Merger
	source string
}

func (p sourcePublisher) Publish(ctx context.Context, cfg model.Config) xds.Report {
	return p.m.Publish(ctx, p.source, cfg)
}
