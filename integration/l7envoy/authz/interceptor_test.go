package authz

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/tlbproject/tlb/l7/authz/external/interceptorpb"
)

// interceptor is a service's own ("external") interceptor, played by the
// test over gRPC and REST. What it answers depends on the route's
// parameter "mode":
//
//	allow  allow, with upstream headers x-ext-id, x-ext-saw-user (the
//	       x-user-id an earlier interceptor set) and x-ext-task (the path
//	       parameter "task"), and the response header x-ext: allowed
//	deny   respond 418 with x-deny-reason: teapot and a body
//	hang   no answer until the caller gives up
//	error  a failure (gRPC Internal, HTTP 500)
type interceptor struct {
	interceptorpb.UnimplementedInterceptorServer

	mu    sync.Mutex
	calls []*interceptorpb.InterceptRequest
}

func (f *interceptor) Intercept(ctx context.Context, r *interceptorpb.InterceptRequest) (*interceptorpb.InterceptResponse, error) {
	f.mu.Lock()
	f.calls = append(f.calls, r)
	f.mu.Unlock()
	switch r.GetParameters()["mode"] {
	case "allow":
		return &interceptorpb.InterceptResponse{Decision: &interceptorpb.InterceptResponse_Allow{Allow: &interceptorpb.Allow{
			UpstreamHeaders: map[string]string{"x-ext-id": r.GetId(), "x-ext-saw-user": r.GetHeaders()["x-user-id"],
				"x-ext-task": r.GetPathParams()["task"], "x-ext-method": r.GetParameters()["method"]},
			DownstreamHeaders: map[string]string{"x-ext": "allowed"},
		}}}, nil
	case "deny":
		return &interceptorpb.InterceptResponse{Decision: &interceptorpb.InterceptResponse_Respond{Respond: &interceptorpb.Respond{
			Status: 418, Headers: map[string]string{"x-deny-reason": "teapot"}, Body: "no coffee here",
		}}}, nil
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, status.Error(codes.Internal, "the interceptor broke")
}

// count is how many calls the interceptor received.
func (f *interceptor) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// last is the last call received.
func (f *interceptor) last() *interceptorpb.InterceptRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return nil
	}
	return f.calls[len(f.calls)-1]
}

// serveGRPC serves f over gRPC on ip and returns its host:port.
func serveGRPC(t *testing.T, ip string, f *interceptor) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	interceptorpb.RegisterInterceptorServer(g, f)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return l.Addr().String()
}

// serveREST serves f as the REST transport (the contract's messages as
// JSON over POST) on ip and returns its URL.
func serveREST(t *testing.T, ip string, f *interceptor) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var in interceptorpb.InterceptRequest
		if err != nil || r.Method != http.MethodPost || protojson.Unmarshal(b, &in) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		out, err := f.Intercept(r.Context(), &in)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		b, _ = protojson.Marshal(out)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/intercept"
}

// closedAddr returns a host:port on ip where nothing listens.
func closedAddr(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
