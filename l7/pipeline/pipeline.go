package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/tlbproject/tlb/l7/model"
)

// Change is one resolved change of the merged configuration, handed to
// every consumer in turn. Consumers only read it.
type Change struct {
	// Config is the merged configuration as the sources gave it.
	Config model.Config
	// Resolved is the one resolve of Config.
	Resolved *model.Resolved
	// Start is when the change reached the pipeline: the origin of the
	// build and push durations.
	Start time.Time
}

// Report says what a change did. The pipeline sets Problems; the xDS
// consumer sets the rest, for the consumers after it and for the source.
type Report struct {
	// Problems are per-object errors of the resolve; those objects were
	// left out.
	Problems []model.Problem
	// Invalid maps a snapshot key to why its resource set failed
	// validation; that key kept its previous snapshot.
	Invalid map[string]error
	// Changed lists the keys whose snapshot was swapped.
	Changed []string
	// Removed lists the keys no longer served.
	Removed []string
}

// Consumer is one user of each resolved change (Contour's dag.Observer).
// It may add to rep what it did; the consumers after it read that.
type Consumer interface {
	Consume(ctx context.Context, c Change, rep *Report)
}

// ConsumerFunc is a function as a Consumer.
type ConsumerFunc func(ctx context.Context, c Change, rep *Report)

// Consume calls f.
func (f ConsumerFunc) Consume(ctx context.Context, c Change, rep *Report) { f(ctx, c, rep) }

// Resolver resolves a merged configuration. *model.Resolver implements
// it (it redoes only what the services that changed need).
type Resolver interface {
	Resolve(cfg model.Config, opts model.Options) model.Resolved
}

// Pipeline resolves each change once and hands the result to its
// consumers in order. It is safe for concurrent use: changes pass one at
// a time.
type Pipeline struct {
	resolver  Resolver
	opts      model.Options
	now       func() time.Time
	consumers []Consumer

	mu sync.Mutex
}

// New returns a Pipeline resolving with opts (the operator's rules for
// conflicts) and running consumers in the order given; now is the clock.
func New(resolver Resolver, opts model.Options, now func() time.Time, consumers ...Consumer) *Pipeline {
	return &Pipeline{resolver: resolver, opts: opts, now: now, consumers: consumers}
}

// Publish makes cfg the desired state: it resolves cfg, then runs every
// consumer on the result, in order. cfg must be complete: the Merger
// publishes only once every source has been read.
func (p *Pipeline) Publish(ctx context.Context, cfg model.Config) Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := p.now()
	resolved := p.resolver.Resolve(cfg, p.opts)
	rep := Report{Problems: resolved.Problems}
	c := Change{Config: cfg, Resolved: &resolved, Start: start}
	for _, consumer := range p.consumers {
		consumer.Consume(ctx, c, &rep)
	}
	return rep
}
