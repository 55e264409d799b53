package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/l7/authz"
	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

// authzStreamWorkers are the authorization service's gRPC stream workers:
// more than the checks in flight (a check waits on Redis or an external
// interceptor), so streams reuse workers instead of starting goroutines.
const authzStreamWorkers = 128

// authzDialer opens the connections to external gRPC interceptors.
type authzDialer struct{}

func (authzDialer) Dial(target string) (grpc.ClientConnInterface, error) {
	return grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// startAuthz serves the authorization service (Envoy's ext_authz) on
// addr, with its sessions in the Redis at redisAddr, until ctx ends. The
// returned channel receives Serve's result. addr follows --xds-addr's
// rules: a unix socket in the pod's volume, or loopback. The service runs
// no external interceptor and opens no htpasswd file until told what the
// operator declared (Service.Declare).
func startAuthz(ctx context.Context, log *slog.Logger, reg prometheus.Registerer, addr, redisAddr, redisPasswordFile string) (*authz.Service, <-chan error, error) {
	if redisAddr == "" {
		return nil, nil, errors.New("serve: --authz-listen needs --authz-redis (the session store)")
	}
	network, address, err := xdsListenAddr(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--authz-listen: %w", err)
	}
	if network == "tcp" {
		host, _, _ := net.SplitHostPort(address)
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, nil, fmt.Errorf("--authz-listen %s: only a unix socket or a loopback address (Envoy beside l7 is the only client)", addr)
		}
	}
	password, err := sessionstore.ReadPassword(redisPasswordFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--authz-redis-password-file: %w", err)
	}
	rc := sessionstore.NewClient(redisAddr, password)
	store := sessionstore.NewBatched(rc, "", sessionstore.BatchOptions{})
	svc, err := authz.New(authz.Deps{Sessions: store, HTTP: &http.Client{Timeout: 30 * time.Second},
		Dial: authzDialer{}, Log: log, Now: time.Now, Registerer: reg})
	if err != nil {
		_ = rc.Close()
		return nil, nil, err
	}
	lis, err := listenADS(network, address)
	if err != nil {
		_ = rc.Close()
		return nil, nil, err
	}
	storeDone := make(chan struct{})
	go func() { store.Run(ctx); close(storeDone) }()
	done := make(chan error, 1)
	go func() {
		err := svc.Serve(ctx, lis, grpc.NumStreamWorkers(authzStreamWorkers))
		<-storeDone
		done <- errors.Join(err, rc.Close())
	}()
	log.Info("serving the authorization service", "addr", addr, "redis", redisAddr, "redisAuth", password != "")
	return svc, done, nil
}
