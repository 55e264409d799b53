//go:build k8s

package tenant

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

// seen is what a backend received, as it answers it in JSON.
type seen struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Host    string            `json:"host"`
	Headers map[string]string `json:"headers"`
}

// backend is the application behind every route: it answers each request
// with what it received, and plays the login service on /login (a
// session in Redis with its CSRF token, and the cookies).
type backend struct {
	addr     string
	sessions *sessionstore.Redis
}

func startBackend(t *testing.T, ip string, sessions *sessionstore.Redis) *backend {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{addr: l.Addr().String(), sessions: sessions}
	srv := httptest.NewUnstartedServer(b)
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return b
}

func (b *backend) port() int { return b.tcp().Port }

func (b *backend) tcp() *net.TCPAddr {
	a, _ := net.ResolveTCPAddr("tcp", b.addr)
	return a
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/login" {
		b.login(w, r)
		return
	}
	s := seen{Method: r.Method, Path: r.URL.Path, Host: r.Host, Headers: map[string]string{}}
	for k, v := range r.Header {
		s.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s)
}

func (b *backend) login(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, token := randomID(), randomID()
	fields := map[string]string{"user": q.Get("user"), "csrf": token}
	if v := q.Get("roles"); v != "" {
		fields["roles"] = v
	}
	if err := b.sessions.Save(r.Context(), id, fields, time.Hour); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "session", Value: id, Path: "/", HttpOnly: true})
	http.SetCookie(w, &http.Cookie{Name: "csrf_token", Value: token, Path: "/"})
	w.WriteHeader(http.StatusNoContent)
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// recorder is an HTTP server that records what it receives: a REST
// interceptor that allows everything (the operator's declared one), or a
// tenant's collector of other people's credentials.
type recorder struct {
	url string
	mu  sync.Mutex
	got []*http.Request
	// bodies are the request bodies, in order.
	bodies []string
}

func startRecorder(t *testing.T, addr string) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	rec := &recorder{url: "http://" + addr}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.got = append(rec.got, r)
		rec.bodies = append(rec.bodies, string(body))
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"allow":{"upstreamHeaders":{"x-audited":"yes"}}}`)
	}))
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return rec
}

// calls is how many requests the recorder received, and their bodies.
func (r *recorder) calls() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got), append([]string(nil), r.bodies...)
}
