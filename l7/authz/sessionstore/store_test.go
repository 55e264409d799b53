package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tlbproject/tlb/l7/authz/redisproc"
)

type loader interface {
	Load(ctx context.Context, id string) (map[string]string, bool, error)
}

func realRedis(t *testing.T) *redis.Client {
	t.Helper()
	rp := redisproc.StartForTest(t)
	rc := redis.NewClient(&redis.Options{Addr: rp.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rc.Close() })
	return rc
}

func TestStoresLoadWhatSaveWrote(t *testing.T) {
	rc := realRedis(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plain := NewRedis(rc, "")
	batched := NewBatched(rc, "", BatchOptions{Workers: 2, MaxBatch: 8})
	go batched.Run(ctx)
	const n = 200
	for i := range n {
		if err := plain.Save(ctx, fmt.Sprint("s", i), map[string]string{"user": fmt.Sprint("u", i)}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if ttl := rc.TTL(ctx, "session:s1").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("TTL of a saved session %s, want (0, 1h]", ttl)
	}
	for name, s := range map[string]loader{"plain": plain, "batched": batched} {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 2*n)
			for i := range n { // concurrent, so the batched store forms batches
				wg.Add(2)
				go func() {
					defer wg.Done()
					m, found, err := s.Load(ctx, fmt.Sprint("s", i))
					if err != nil || !found || m["user"] != fmt.Sprint("u", i) {
						errs <- fmt.Errorf("Load(s%d) = %v, %v, %w", i, m, found, err)
					}
				}()
				go func() {
					defer wg.Done()
					if m, found, err := s.Load(ctx, fmt.Sprint("missing", i)); err != nil || found {
						errs <- fmt.Errorf("Load(missing%d) = %v, %v, %w; want not found", i, m, found, err)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestBatchedLoadEndsWithItsContext(t *testing.T) {
	rc := realRedis(t)
	b := NewBatched(rc, "", BatchOptions{}) // Run not started: nothing answers
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := b.Load(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestStoresReportADownRedis(t *testing.T) {
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := NewBatched(rc, "", BatchOptions{Workers: 1})
	go b.Run(ctx)
	for name, s := range map[string]loader{"plain": NewRedis(rc, ""), "batched": b} {
		if _, found, err := s.Load(ctx, "x"); err == nil || found {
			t.Errorf("%s: Load from a closed port: found %v, err %v; want an error", name, found, err)
		}
	}
}
