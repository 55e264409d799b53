package sessionstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Batched is a session store that coalesces the Loads of concurrent checks
// into Redis pipelines: each of its workers takes one waiting Load, adds
// every other one already waiting (up to MaxBatch), and sends them as one
// pipeline. Nothing waits for a batch to fill, so an idle store answers as
// fast as a plain one; a busy one does one write and one read per batch
// instead of per check, on both sides of the socket.
type Batched struct {
	client  redis.Cmdable
	prefix  string
	opts    BatchOptions
	pending chan *load
}

// BatchOptions shape a Batched store.
type BatchOptions struct {
	// Workers is the number of pipelines in flight (default 4).
	Workers int
	// MaxBatch bounds one pipeline (default 64).
	MaxBatch int
	// Timeout bounds one pipeline (default 1s); each Load also ends with
	// its own context.
	Timeout time.Duration
}

type load struct {
	key   string
	reply chan loadResult
}

type loadResult struct {
	fields map[string]string
	err    error
}

// NewBatched returns a batched store on client with keys prefix+id
// (DefaultPrefix when prefix is empty). Run must be running for Loads to
// be answered.
func NewBatched(client redis.Cmdable, prefix string, o BatchOptions) *Batched {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 64
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	return &Batched{client: client, prefix: prefix, opts: o, pending: make(chan *load)}
}

// Run runs the workers until ctx ends.
func (b *Batched) Run(ctx context.Context) {
	done := make(chan struct{})
	for range b.opts.Workers {
		go func() {
			b.work(ctx)
			done <- struct{}{}
		}()
	}
	for range b.opts.Workers {
		<-done
	}
}

// Load returns the session's fields, as Redis.Load does.
func (b *Batched) Load(ctx context.Context, id string) (map[string]string, bool, error) {
	l := &load{key: b.prefix + id, reply: make(chan loadResult, 1)}
	select {
	case b.pending <- l:
	case <-ctx.Done():
		return nil, false, fmt.Errorf("HGETALL %s<id>: waiting for a pipeline: %w", b.prefix, ctx.Err())
	}
	select {
	case r := <-l.reply:
		if r.err != nil {
			return nil, false, fmt.Errorf("HGETALL %s<id>: %w", b.prefix, r.err)
		}
		return r.fields, len(r.fields) > 0, nil
	case <-ctx.Done():
		return nil, false, fmt.Errorf("HGETALL %s<id>: %w", b.prefix, ctx.Err())
	}
}

func (b *Batched) work(ctx context.Context) {
	batch := make([]*load, 0, b.opts.MaxBatch)
	cmds := make([]*redis.MapStringStringCmd, 0, b.opts.MaxBatch)
	for {
		batch = batch[:0]
		select {
		case l := <-b.pending:
			batch = append(batch, l)
		case <-ctx.Done():
			return
		}
	more:
		for len(batch) < b.opts.MaxBatch {
			select {
			case l := <-b.pending:
				batch = append(batch, l)
			default:
				break more
			}
		}
		pctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
		p := b.client.Pipeline()
		cmds = cmds[:0]
		for _, l := range batch {
			cmds = append(cmds, p.HGetAll(pctx, l.key))
		}
		_, _ = p.Exec(pctx) // a failure is also set on each command
		cancel()
		for i, l := range batch {
			m, err := cmds[i].Result()
			l.reply <- loadResult{fields: m, err: err}
		}
	}
}
