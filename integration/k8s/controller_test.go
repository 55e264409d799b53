//go:build k8s

package k8s

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/ipam"
	"github.com/tlbproject/tlb/ipam/controller"
)

// runningController is an in-process ipam controller.
type runningController struct {
	cancel context.CancelFunc
	done   chan error
}

// startController runs a fresh controller (new allocator, state rebuilt
// from the API server) until stop or the end of the test.
func startController(t *testing.T, kc kubernetes.Interface, dc dynamic.Interface, defaultEnv string) *runningController {
	t.Helper()
	return startControllerWith(t, kc, dc, defaultEnv)
}

// slowClients returns clients limited to qps requests per second, to make
// a controller slow enough to be stopped half-way.
func slowClients(t *testing.T, qps float32) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	cfg := *server.Config
	cfg.QPS, cfg.Burst = qps, int(qps)
	kc, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kc, dc
}

func startControllerWith(t *testing.T, kc kubernetes.Interface, dc dynamic.Interface, defaultEnv string) *runningController {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := controller.New(controller.Options{
		Client: kc, Dynamic: dc, Log: log, DefaultEnvironment: ipam.Environment(defaultEnv),
		Workers: 4, Identity: t.Name(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rc := &runningController{cancel: cancel, done: make(chan error, 1)}
	go func() { rc.done <- c.Run(ctx) }()
	t.Cleanup(rc.stop)
	return rc
}

func (rc *runningController) stop() {
	rc.cancel()
	if err := <-rc.done; err != nil && !errors.Is(err, context.Canceled) {
		slog.Error("controller", "err", err)
	}
	rc.done <- nil // make stop idempotent
}
