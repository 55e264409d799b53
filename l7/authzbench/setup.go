package authzbench

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/l7/authz"
	"github.com/tlbproject/tlb/l7/authz/external/interceptorpb"
	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

// rig is everything a run needs, started on loopback.
type rig struct {
	authzAddr string
	extAddr   string
	stop      func()
}

// streamWorkers are the service's gRPC stream workers: more than the calls
// in flight, since a check waits on Redis, so no stream starts a new
// goroutine (and grows its stack again).
const streamWorkers = 128

type dialer struct{}

func (dialer) Dial(target string) (grpc.ClientConnInterface, error) {
	return grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// allowAll is the external interceptor of the second run: it allows and
// adds one header.
type allowAll struct {
	interceptorpb.UnimplementedInterceptorServer
}

func (allowAll) Intercept(context.Context, *interceptorpb.InterceptRequest) (*interceptorpb.InterceptResponse, error) {
	return &interceptorpb.InterceptResponse{Decision: &interceptorpb.InterceptResponse_Allow{
		Allow: &interceptorpb.Allow{UpstreamHeaders: map[string]string{"x-tenant": "t1"}}}}, nil
}

// start starts Redis with sessions sessions, the service and the external
// interceptor.
func start(ctx context.Context, dir string, sessions int, log *slog.Logger) (*rig, error) {
	ctx, cancel := context.WithCancel(ctx)
	var stops []func()
	stop := func() {
		cancel()
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	rp, err := redisproc.Start(ctx, dir, 10*time.Second)
	if err != nil {
		stop()
		return nil, err
	}
	stops = append(stops, rp.Stop)
	rc := redis.NewClient(&redis.Options{Addr: rp.Addr, PoolSize: 128, MinIdleConns: 64, ContextTimeoutEnabled: true})
	stops = append(stops, func() { _ = rc.Close() })
	if err := fill(ctx, rc, sessions); err != nil {
		stop()
		return nil, err
	}
	store := sessionstore.NewBatched(rc, "", sessionstore.BatchOptions{})
	storeDone := make(chan struct{})
	go func() { store.Run(ctx); close(storeDone) }()
	stops = append(stops, func() { <-storeDone })
	svc, err := authz.New(authz.Deps{Sessions: store, HTTP: http.DefaultClient,
		Dial: dialer{}, Log: log, Now: time.Now})
	if err != nil {
		stop()
		return nil, err
	}
	al, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		stop()
		return nil, err
	}
	served := make(chan struct{})
	go func() {
		_ = svc.Serve(ctx, al, grpc.NumStreamWorkers(streamWorkers))
		close(served)
	}()
	stops = append(stops, func() { <-served })

	el, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		stop()
		return nil, err
	}
	// The operator declares the one external interceptor (l7 serve does
	// so from its DSL files).
	svc.Declare(authz.Declared{GRPC: map[string]bool{el.Addr().String(): true}})
	gs := grpc.NewServer()
	interceptorpb.RegisterInterceptorServer(gs, allowAll{})
	go func() { _ = gs.Serve(el) }()
	stops = append(stops, gs.Stop)
	return &rig{authzAddr: al.Addr().String(), extAddr: el.Addr().String(), stop: stop}, nil
}

// fill writes n sessions "bench-<i>" in pipelined batches.
func fill(ctx context.Context, rc *redis.Client, n int) error {
	const batch = 1000
	for i := 0; i < n; i += batch {
		p := rc.Pipeline()
		for j := i; j < min(i+batch, n); j++ {
			p.HSet(ctx, sessionstore.DefaultPrefix+sessionID(j), "user", "u-"+strconv.Itoa(j), "roles", "reader,writer")
			p.Expire(ctx, sessionstore.DefaultPrefix+sessionID(j), time.Hour)
		}
		if _, err := p.Exec(ctx); err != nil {
			return fmt.Errorf("writing sessions: %w", err)
		}
	}
	return nil
}

func sessionID(i int) string { return "bench-" + strconv.Itoa(i) }
