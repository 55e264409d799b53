package dslsource_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
)

// writeOnFirstPublish is a Publisher that, right after the first load has
// been read, writes one more file into the directory: the change that used
// to fall between the first read and the start of the watch.
type writeOnFirstPublish struct {
	inner pipeline.Publisher
	write func()
	once  sync.Once
}

func (p *writeOnFirstPublish) Publish(ctx context.Context, cfg model.Config) pipeline.Report {
	rep := p.inner.Publish(ctx, cfg)
	p.once.Do(p.write)
	return rep
}

// TestRunSeesChangeRightAfterFirstRead: a file written just after the first
// read is served without waiting for the resync (an hour here).
func TestRunSeesChangeRightAfterFirstRead(t *testing.T) {
	dir := copyExample(t)
	rl, srv, _ := newReloader(t, dir)
	body := "kind: gateway/service/v1\nname: late\ngroup: edge\nhosts: [late.example.com]\nlisteners: [public/api]\nupstreams: [{name: u, endpoints: [\"198.51.100.77:80\"]}]\nroutes:\n  - {prefix: /, target: u}\n"
	// The first version is handed over through a channel: the write runs
	// in the reloader's goroutine (a plain variable raced, go test -race).
	firstCh := make(chan string, 1)
	const routes = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	rl.Server = &writeOnFirstPublish{inner: rl.Server, write: func() {
		firstCh <- srv.Versions()["gateway/edge"][routes]
		if err := os.WriteFile(filepath.Join(dir, "late.yaml"), []byte(body), 0o600); err != nil {
			t.Error(err)
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rl.Run(ctx, 20*time.Millisecond, time.Hour) }()
	defer func() { cancel(); <-done }()
	var first string
	select {
	case first = <-firstCh:
	case <-time.After(time.Minute):
		t.Fatal("nothing was published")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		v := srv.Versions()["gateway/edge"][routes]
		if first != "" && v != "" && v != first {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a file written right after the first read was never served: %v", srv.Versions())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
