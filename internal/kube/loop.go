package kube

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// ModelLoop is the control loop every TLB Kubernetes source shares: start
// the informers, wait for their caches, then rebuild the whole model on
// each key from the queue and emit it only when it differs from the last
// one emitted. Build errors (caches unreadable) are retried rate-limited;
// a nil model means "cannot be built from these objects" and emits
// nothing, so the last model stays programmed.
type ModelLoop[T any] struct {
	What      string // e.g. "director model", for logs and errors
	Factories []interface{ Start(<-chan struct{}) }
	Shutdown  []func()
	Synced    []cache.InformerSynced
	Queue     workqueue.TypedRateLimitingInterface[string]
	Build     func() (*T, error)
	Log       *slog.Logger
	// Changed logs a new model (optional).
	Changed func(log *slog.Logger, m T)

	last *T
}

// Run runs the loop until ctx ends; emit gets the first model and every
// model that differs from the last one, on Run's goroutine. It returns an
// error only if the caches never synced.
func (l *ModelLoop[T]) Run(ctx context.Context, emit func(T)) error {
	defer l.Queue.ShutDown()
	for _, f := range l.Factories {
		f.Start(ctx.Done())
	}
	defer func() {
		l.Queue.ShutDown()
		for _, sd := range l.Shutdown {
			sd()
		}
	}()
	if !l.waitForCaches(ctx) {
		return fmt.Errorf("%s: wait for the informer caches: %w", l.What, ctx.Err())
	}
	l.Queue.Add(ModelKey)
	go func() {
		<-ctx.Done()
		l.Queue.ShutDown()
	}()
	wait.Until(func() {
		for l.processNext(emit) {
		}
	}, time.Second, ctx.Done())
	return nil
}

// syncWarnEvery is how often waitForCaches says it is still waiting.
const syncWarnEvery = 10 * time.Second

// waitForCaches waits until every informer has synced, saying every
// syncWarnEvery that it is still waiting (an API server that cannot be
// reached at start is otherwise silent: client-go retries its lists
// quietly). Nothing is emitted before the caches are complete.
func (l *ModelLoop[T]) waitForCaches(ctx context.Context) bool {
	start := time.Now()
	for {
		wctx, cancel := context.WithTimeout(ctx, syncWarnEvery)
		ok := cache.WaitForCacheSync(wctx.Done(), l.Synced...)
		cancel()
		switch {
		case ok:
			return true
		case ctx.Err() != nil:
			return false
		}
		l.Log.Warn("still waiting for the informer caches to sync; is the API server reachable? Nothing is built from it until they are",
			"what", l.What, "waited", time.Since(start).Round(time.Second).String())
	}
}

// ModelKey is the only key of a ModelLoop's queue: every event rebuilds the
// whole model.
const ModelKey = "model"

func (l *ModelLoop[T]) processNext(emit func(T)) bool {
	key, quit := l.Queue.Get()
	if quit {
		return false
	}
	defer l.Queue.Done(key)
	m, err := l.Build()
	if err != nil {
		l.Log.Warn("build the "+l.What+" from the API server; the last model stays", "err", err)
		l.Queue.AddRateLimited(key)
		return true
	}
	l.Queue.Forget(key)
	if m == nil || (l.last != nil && reflect.DeepEqual(*l.last, *m)) {
		return true
	}
	l.last = m
	if l.Changed != nil {
		l.Changed(l.Log, *m)
	}
	emit(*m)
	return true
}
