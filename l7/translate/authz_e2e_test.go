package translate_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/l7/authz"
	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

type noDial struct{}

func (noDial) Dial(string) (grpc.ClientConnInterface, error) { return nil, net.ErrClosed }

// startAuthz serves the real authorization service on loopback with a
// private redis-server, and returns a client and the session store.
func startAuthz(t *testing.T) (authv3.AuthorizationClient, *sessionstore.Redis) {
	t.Helper()
	rp := redisproc.StartForTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rc := redis.NewClient(&redis.Options{Addr: rp.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = rc.Close() })
	store := sessionstore.NewRedis(rc, "")
	svc, err := authz.New(authz.Deps{Sessions: store, HTTP: http.DefaultClient, Dial: noDial{},
		Log: slog.New(slog.DiscardHandler), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- svc.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-served })
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return authv3.NewAuthorizationClient(cc), store
}

// checkAs sends the CheckRequest Envoy's ext_authz filter sends for a
// request on a route: its attributes and the route's context extensions.
func checkAs(t *testing.T, c authv3.AuthorizationClient, ext map[string]string, method, path string, headers map[string]string) *authv3.CheckResponse {
	t.Helper()
	hs := map[string]string{":method": method, ":path": path, ":authority": "app.example.com", ":scheme": "https"}
	for k, v := range headers {
		hs[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Check(ctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		ContextExtensions: ext,
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: method, Path: path, Host: "app.example.com", Scheme: "https", Headers: hs, Protocol: "HTTP/1.1"}},
	}})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return resp
}

// TestTranslatedChainRunsInTheService: the context extensions the
// translator puts on a route, sent by a real gRPC client as Envoy sends
// them, make the real authorization service (real Redis) run that route's
// chain: session first (401 without a session; the user's id upstream with
// one), then CSRF (a foreign Origin on a POST is refused).
func TestTranslatedChainRunsInTheService(t *testing.T) {
	r := resolveDocs(t, filtersGateway, filtersApp, filtersPlain)
	_, rcs := gatewaySet(t, r)
	ext := authzOf(t, routesByName(rcs["http-203.0.113.1-80"])["app/private"]).GetCheckSettings().GetContextExtensions()
	if len(ext) == 0 {
		t.Fatal("app/private has no context extensions")
	}
	client, store := startAuthz(t)

	if got := checkAs(t, client, ext, "GET", "/private/x", nil); got.GetStatus().GetCode() != int32(codes.Unauthenticated) ||
		got.GetDeniedResponse().GetStatus().GetCode() != 401 {
		t.Fatalf("no session: %v, want 401 from sessionInterceptor", got)
	}
	if err := store.Save(context.Background(), "abc123", map[string]string{"user": "u-42", "roles": "admin"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	ok := checkAs(t, client, ext, "GET", "/private/x", map[string]string{"cookie": "sid=abc123"})
	if ok.GetStatus().GetCode() != int32(codes.OK) {
		t.Fatalf("with a session: %v", ok)
	}
	up := map[string]string{}
	for _, h := range ok.GetOkResponse().GetHeaders() {
		up[h.GetHeader().GetKey()] = h.GetHeader().GetValue()
	}
	if up["x-user-id"] != "u-42" {
		t.Errorf("upstream headers %v, want x-user-id u-42 from the session (cookie sid, as the route says)", up)
	}
	csrf := checkAs(t, client, ext, "POST", "/private/x", map[string]string{"cookie": "sid=abc123", "origin": "https://evil.example"})
	if csrf.GetDeniedResponse().GetStatus().GetCode() != 403 {
		t.Errorf("cross-site POST: %v, want 403 from csrfInterceptor, the chain's second step", csrf)
	}
}
