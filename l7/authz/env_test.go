package authz

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/external/interceptorpb"
	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

// env is one authorization service on loopback with its real
// dependencies: a private redis-server, a gRPC and a REST external
// interceptor, and a gRPC client that calls Check as Envoy does.
type env struct {
	svc       *Service
	declared  Declared
	client    authv3.AuthorizationClient
	redis     *redis.Client
	sessions  *sessionstore.Redis
	reg       *prometheus.Registry
	grpcExt   *fakeInterceptor
	restExt   *fakeInterceptor
	stopRedis func()
	grpcAddr  string // of grpcExt
	restURL   string // of restExt
}

type grpcDialer struct{}

func (grpcDialer) Dial(target string) (grpc.ClientConnInterface, error) {
	return grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

func newEnv(t *testing.T) *env {
	t.Helper()
	rp := redisproc.StartForTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rc := redis.NewClient(&redis.Options{Addr: rp.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rc.Close() })
	e := &env{redis: rc, sessions: sessionstore.NewRedis(rc, ""), reg: prometheus.NewRegistry(), stopRedis: rp.Stop}

	e.grpcExt = &fakeInterceptor{}
	gl := listen(t)
	gs := grpc.NewServer()
	interceptorpb.RegisterInterceptorServer(gs, e.grpcExt)
	go func() { _ = gs.Serve(gl) }()
	t.Cleanup(gs.Stop)
	e.grpcAddr = gl.Addr().String()

	e.restExt = &fakeInterceptor{}
	hs := httptest.NewServer(e.restExt)
	t.Cleanup(hs.Close)
	e.restURL = hs.URL + "/intercept"

	svc, err := New(Deps{Sessions: e.sessions, HTTP: hs.Client(), Dial: grpcDialer{},
		Log: slog.New(slog.DiscardHandler), Now: time.Now, Registerer: e.reg})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.declare(Declared{GRPC: map[string]bool{e.grpcAddr: true}, REST: map[string]bool{e.restURL: true}})
	al := listen(t)
	served := make(chan error, 1)
	go func() { served <- svc.Serve(ctx, al) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	cc, err := grpc.NewClient(al.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	e.client = authv3.NewAuthorizationClient(cc)
	return e
}

// declare adds to what the operator declared, as l7 serve does from its
// DSL files.
func (e *env) declare(d Declared) {
	for _, m := range []*map[string]bool{&e.declared.GRPC, &e.declared.REST, &e.declared.UsersFiles} {
		if *m == nil {
			*m = map[string]bool{}
		}
	}
	for k := range d.GRPC {
		e.declared.GRPC[k] = true
	}
	for k := range d.REST {
		e.declared.REST[k] = true
	}
	for k := range d.UsersFiles {
		e.declared.UsersFiles[k] = true
	}
	e.svc.Declare(e.declared)
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// req is an HTTP request as Envoy describes it in a CheckRequest.
type req struct {
	method  string
	path    string // with query
	host    string
	scheme  string
	headers map[string]string
}

// check calls Check as Envoy's ext_authz filter does: the request's
// attributes and the route's context extensions. chainValue "" sends no
// extension.
func (e *env) check(t *testing.T, chainValue string, r req) *authv3.CheckResponse {
	t.Helper()
	if r.method == "" {
		r.method = "GET"
	}
	if r.path == "" {
		r.path = "/"
	}
	if r.host == "" {
		r.host = "app.example.com"
	}
	if r.scheme == "" {
		r.scheme = "https"
	}
	hs := map[string]string{":method": r.method, ":path": r.path, ":authority": r.host, ":scheme": r.scheme}
	for k, v := range r.headers {
		hs[k] = v
	}
	cr := &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Source:      &authv3.AttributeContext_Peer{Address: sockAddr("10.0.0.7", 40000)},
		Destination: &authv3.AttributeContext_Peer{Address: sockAddr("10.1.0.1", 443)},
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id: "req-1", Method: r.method, Path: r.path, Host: r.host, Scheme: r.scheme,
			Headers: hs, Protocol: "HTTP/1.1",
		}},
	}}
	if chainValue != "" {
		cr.Attributes.ContextExtensions = map[string]string{chain.Key: chainValue, "other": "x"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.client.Check(ctx, cr)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return resp
}

func sockAddr(ip string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}}}}
}

// encode is chain.Encode for tests.
func encode(t *testing.T, c ...chain.Interceptor) string {
	t.Helper()
	v, err := chain.Encode(c)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return v
}

// fakeInterceptor is an external interceptor serving both transports. Its
// configured parameter "mode" says what it answers: "allow" (echoes the
// x-user-id it saw as x-ext-saw-user upstream, sets x-ext downstream),
// "deny" (418 with a header and a body), "hang" (waits until the caller
// gives up).
type fakeInterceptor struct {
	interceptorpb.UnimplementedInterceptorServer
	mu    sync.Mutex
	calls []*interceptorpb.InterceptRequest
	// called, when set, receives every request as it arrives.
	called chan *interceptorpb.InterceptRequest
}

func (f *fakeInterceptor) Intercept(ctx context.Context, r *interceptorpb.InterceptRequest) (*interceptorpb.InterceptResponse, error) {
	f.mu.Lock()
	f.calls = append(f.calls, r)
	called := f.called
	f.mu.Unlock()
	if called != nil {
		called <- r
	}
	switch r.GetParameters()["mode"] {
	case "deny":
		return &interceptorpb.InterceptResponse{Decision: &interceptorpb.InterceptResponse_Respond{Respond: &interceptorpb.Respond{
			Status: 418, Headers: map[string]string{"x-deny-reason": "teapot"}, Body: "no coffee here"}}}, nil
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &interceptorpb.InterceptResponse{Decision: &interceptorpb.InterceptResponse_Allow{Allow: &interceptorpb.Allow{
		UpstreamHeaders:   map[string]string{"x-ext-saw-user": r.GetHeaders()["x-user-id"]},
		DownstreamHeaders: map[string]string{"x-ext": "allowed"},
	}}}, nil
}

// ServeHTTP is the REST transport of the same interceptor.
func (f *fakeInterceptor) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	b, _ := io.ReadAll(hr.Body)
	var in interceptorpb.InterceptRequest
	if hr.Method != http.MethodPost || !strings.HasPrefix(hr.Header.Get("Content-Type"), "application/json") ||
		protojson.Unmarshal(b, &in) != nil || !json.Valid(b) {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	out, err := f.Intercept(hr.Context(), &in)
	if err != nil {
		http.Error(w, err.Error(), http.StatusGatewayTimeout)
		return
	}
	b, _ = protojson.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (f *fakeInterceptor) received() []*interceptorpb.InterceptRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*interceptorpb.InterceptRequest(nil), f.calls...)
}
