//go:build k8s

package k8sl7

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/internal/poll"
	l7kube "github.com/tlbproject/tlb/l7/kube"
	"github.com/tlbproject/tlb/l7/model"
	tlbxds "github.com/tlbproject/tlb/l7/xds"
)

// lockedBuffer collects log output from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// captureLog returns a debug-level logger writing to a buffer (and to the
// test log).
func captureLog(t *testing.T) (*slog.Logger, *lockedBuffer) {
	buf := &lockedBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// recorder keeps every config the source published.
type recorder struct {
	mu   sync.Mutex
	cfgs []model.Config
}

func (r *recorder) add(c model.Config) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cfgs = append(r.cfgs, c)
}

func (r *recorder) last() (model.Config, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cfgs) == 0 {
		return model.Config{}, 0
	}
	return r.cfgs[len(r.cfgs)-1], len(r.cfgs)
}

func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Explained(t, d, what, cond)
}

// serverOptions, resolveOptions and sourceOptions serve group edge from
// the namespace of the tests, whose gRPC Service (no hosts) may use the
// catch-all host.
var (
	serverOptions  = tlbxds.Options{Group: "edge"}
	resolveOptions = model.Options{CatchAllNamespaces: []string{ns}}
	sourceOptions  = l7kube.Options{Group: "edge", Namespaces: []string{ns}, Now: time.Now}
)

// withoutOrigins returns cfg with every Origin, owner namespace and
// creation time cleared: the file mode names files and is the operator's,
// the Kubernetes source names namespace/name and the time of creation.
func withoutOrigins(cfg model.Config) model.Config {
	out := model.Config{}
	for _, s := range cfg.Services {
		s.Origin, s.Namespace, s.Created = "", "", time.Time{}
		out.Services = append(out.Services, s)
	}
	for _, g := range cfg.Gateways {
		g.Origin, g.Created = "", time.Time{}
		out.Gateways = append(out.Gateways, g)
	}
	for _, c := range cfg.Certificates {
		c.Origin, c.Gateway.Origin = "", "" // the gateway's origin: where it came from
		out.Certificates = append(out.Certificates, c)
	}
	return out
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// runSource runs src until the test ends, handing each model to publish;
// an error from Run fails the test.
func runSource(ctx context.Context, t *testing.T, src *l7kube.Source, publish l7kube.PublishFunc) {
	t.Helper()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- src.Run(runCtx, publish) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("source Run: %v", err)
		}
	})
}
