package authz

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/external/interceptorpb"
)

func TestServeAnswersTheChecksInFlightBeforeItReturns(t *testing.T) {
	e := newEnv(t)
	called := make(chan *interceptorpb.InterceptRequest, 1)
	e.grpcExt.mu.Lock()
	e.grpcExt.called = called
	e.grpcExt.mu.Unlock()

	if _, err := New(Deps{Sessions: e.sessions, Dial: grpcDialer{}, Log: slog.New(slog.DiscardHandler)}); err == nil {
		t.Fatal("New without an HTTP client must fail")
	}
	svc, err := New(Deps{Sessions: e.sessions, HTTP: dummyDoer{}, Dial: grpcDialer{}})
	if err != nil {
		t.Fatal(err)
	}
	svc.Declare(Declared{GRPC: map[string]bool{e.grpcAddr: true}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := listen(t)
	served := make(chan error, 1)
	go func() { served <- svc.Serve(ctx, l) }()
	cc, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()

	hang := e.ext(chain.TransportGRPC, map[string]string{"mode": "hang"})
	hang.Timeout = chain.Duration(300 * time.Millisecond)
	answered := make(chan error, 1)
	go func() {
		resp, err := authv3.NewAuthorizationClient(cc).Check(context.Background(), &authv3.CheckRequest{
			Attributes: &authv3.AttributeContext{ContextExtensions: map[string]string{chain.Key: encode(t, hang)}}})
		if err == nil && resp.GetDeniedResponse().GetStatus().GetCode() != 503 {
			t.Errorf("the check in flight got %v, want its 503 (fail closed)", resp)
		}
		answered <- err
	}()
	select { // the check is in flight, waiting on the interceptor
	case <-called:
	case err := <-answered:
		t.Fatalf("the check was answered (%v) before it reached the interceptor", err)
	}
	cancel()
	if err := <-answered; err != nil {
		t.Errorf("the check in flight at shutdown failed: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

type dummyDoer struct{}

func (dummyDoer) Do(*http.Request) (*http.Response, error) { return nil, errors.New("no HTTP here") }
