package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/redisproc"
)

// TestServeAuthzOnUnixSocket: --authz-listen unix://PATH serves the
// authorization service where the bootstrap's tlb-l7-authz cluster points,
// with its sessions in the --authz-redis Redis, and stops with the context.
func TestServeAuthzOnUnixSocket(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rp, err := redisproc.Start(ctx, t.TempDir(), 10*time.Second)
	if err != nil {
		t.Fatalf("this test needs a real Redis: %v", err)
	}
	defer rp.Stop()
	sock := filepath.Join(t.TempDir(), "authz.sock")
	_, done, err := startAuthz(ctx, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), "unix://"+sock, redisOpts(rp.Addr))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	value, _ := chain.Encode(chain.Chain{{Type: chain.TypeSession}})
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	resp, err := authv3.NewAuthorizationClient(cc).Check(cctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		ContextExtensions: map[string]string{chain.Key: value},
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "GET", Path: "/", Host: "a.example.com", Headers: map[string]string{"cookie": "session=nosuch"}}},
	}})
	if err != nil || resp.GetDeniedResponse().GetStatus().GetCode() != 401 {
		t.Fatalf("Check: %v %v, want 401 (unknown session in Redis)", resp, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the authorization service did not stop with its context")
	}
}

func TestServeAuthzRefusals(t *testing.T) {
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	if _, _, err := startAuthz(context.Background(), log, reg, "unix:///tmp/x.sock", redisOpts("")); err == nil {
		t.Error("no --authz-redis accepted")
	}
	// Issue 22: no TCP at all, loopback included (every process of a
	// gateway node reaches it); main accepted 127.0.0.1.
	for _, addr := range []string{"0.0.0.0:9000", "127.0.0.1:9000", "localhost:9000", "[::1]:9000", "unix://relative.sock"} {
		if _, _, err := startAuthz(context.Background(), log, reg, addr, redisOpts("127.0.0.1:6379")); err == nil {
			t.Errorf("--authz-listen %s accepted", addr)
		}
	}
}

// redisOpts are authzOptions with the Redis at addr, no user or password.
func redisOpts(addr string) authzOptions {
	user, file := "", ""
	return authzOptions{redis: &addr, user: &user, passwordFile: &file}
}
