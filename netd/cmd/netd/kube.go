package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/tlbproject/tlb/internal/cli"
	"github.com/tlbproject/tlb/netd/config"
	"github.com/tlbproject/tlb/netd/kube"
	"github.com/tlbproject/tlb/netd/model"
)

// kubeFlags say where the node's VIPs come from when they come from
// Kubernetes rather than from the file's vips: and ports:.
type kubeFlags struct {
	*cli.Kube
	nodeName string
}

// kubeGateway holds the latest gateway model from the API server and
// signals each new one on changed.
type kubeGateway struct {
	mu      sync.Mutex
	file    config.Config // the file's own settings (metrics address)
	latest  *model.Gateway
	changed chan struct{}
	first   chan struct{}
	once    sync.Once
}

// load is the agent's loader in Kubernetes mode.
func (g *kubeGateway) load() (config.Config, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.latest == nil {
		return config.Config{}, fmt.Errorf("no gateway model from the API server yet")
	}
	c := g.file
	c.Gateway = *g.latest
	return c, nil
}

func (g *kubeGateway) set(gw model.Gateway) {
	g.mu.Lock()
	g.latest = &gw
	g.mu.Unlock()
	g.once.Do(func() { close(g.first) })
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// startKube runs the node's Kubernetes source and returns once its first
// model is there (so netd never reconciles an empty model on restart).
func startKube(ctx context.Context, k kubeFlags, file config.Config, log *slog.Logger) (*kubeGateway, error) {
	if k.nodeName == "" {
		return nil, fmt.Errorf("--node (or NODE_NAME) is required with --kubeconfig or --in-cluster")
	}
	c, err := k.Clients("tlb-netd")
	if err != nil {
		return nil, err
	}
	local := kube.DefaultLocal()
	local.Tunnel, local.MSS, local.ListenerPorts = file.Gateway.Tunnel, file.Gateway.MSS, file.ListenerPorts
	local.MSSPolicy, local.GUEPort = file.Gateway.MSSPolicy, file.Gateway.GUEPort
	src, err := kube.NewSource(c.Kube, c.Dynamic, k.nodeName, local, log.With("source", "kubernetes"))
	if err != nil {
		return nil, err
	}
	g := &kubeGateway{file: file, changed: make(chan struct{}, 1), first: make(chan struct{})}
	go func() {
		if err := src.Run(ctx, g.set); err != nil {
			log.Error("kubernetes source stopped", "err", err)
		}
	}()
	select {
	case <-g.first:
		return g, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
