package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
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

// authzOptions are the flags of the authorization service's session store.
type authzOptions struct {
	redis, user, passwordFile *string
}

// authzFlags declares them on fs.
func authzFlags(fs *flag.FlagSet) authzOptions {
	return authzOptions{
		redis:        fs.String("authz-redis", "", "host:port of the Redis holding the sessions of sessionInterceptor (with --authz-listen)"),
		user:         fs.String("authz-redis-user", "", "Redis ACL user of --authz-redis (deploy/: one that may only read session:* keys); default: Redis's default user"),
		passwordFile: fs.String("authz-redis-password-file", "", "file holding the password of --authz-redis (Redis AUTH; a mounted Secret key); default none"),
	}
}

// startAuthz serves the authorization service (Envoy's ext_authz) on
// addr, with its sessions in the Redis o names, until ctx ends. The
// returned channel receives Serve's result. addr is a unix socket in the
// pod's volume: the Envoy beside l7 is the only client.
func startAuthz(ctx context.Context, log *slog.Logger, reg prometheus.Registerer, addr string, o authzOptions) (*authz.Service, <-chan error, error) {
	redisAddr := *o.redis
	if redisAddr == "" {
		return nil, nil, errors.New("serve: --authz-listen needs --authz-redis (the session store)")
	}
	address, err := podSocket("--authz-listen", addr)
	if err != nil {
		return nil, nil, err
	}
	password, err := sessionstore.ReadPassword(*o.passwordFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--authz-redis-password-file: %w", err)
	}
	rc := sessionstore.NewClient(redisAddr, *o.user, password)
	store := sessionstore.NewBatched(rc, "", sessionstore.BatchOptions{})
	svc, err := authz.New(authz.Deps{Sessions: store, HTTP: &http.Client{Timeout: 30 * time.Second},
		Dial: authzDialer{}, Log: log, Now: time.Now, Registerer: reg})
	if err != nil {
		_ = rc.Close()
		return nil, nil, err
	}
	lis, err := listenADS("unix", address)
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
	log.Info("serving the authorization service", "addr", addr, "redis", redisAddr, "redisUser", *o.user, "redisAuth", password != "")
	return svc, done, nil
}
