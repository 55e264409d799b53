package authz

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

// seen is what the backend received, as it answers it in JSON.
type seen struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	// BodyBytes is the length of the body received.
	BodyBytes int64 `json:"bodyBytes"`
}

// backend is the application behind the gateway: it answers every request
// with what it received (seen), and plays the login service on /login:
// it creates a session in Redis, as sessionstore documents, and sets the
// session and CSRF cookies.
type backend struct {
	addr     string
	sessions *sessionstore.Redis

	mu       sync.Mutex
	received []seen
}

// sessionTTL is how long a session of the login service lives.
const sessionTTL = time.Hour

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

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := seen{Method: r.Method, Path: r.URL.Path, Headers: map[string]string{}}
	for k, v := range r.Header {
		s.Headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	s.Headers["host"] = r.Host // Go keeps it apart from the other headers
	if r.URL.Path != "/login" {
		s.BodyBytes, _ = io.Copy(io.Discard, r.Body)
	}
	b.mu.Lock()
	b.received = append(b.received, s)
	b.mu.Unlock()
	if r.URL.Path == "/login" {
		b.login(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s)
}

// login creates a session for ?user= with ?roles= and ?email=, and sets
// the session cookie and a CSRF token cookie.
func (b *backend) login(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fields := map[string]string{"user": q.Get("user")}
	for _, f := range []string{"roles", "email"} {
		if v := q.Get(f); v != "" {
			fields[f] = v
		}
	}
	id, token := randomID(), randomID()
	if err := b.sessions.Save(r.Context(), id, fields, sessionTTL); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "session", Value: id, Path: "/", HttpOnly: true})
	http.SetCookie(w, &http.Cookie{Name: "csrf_token", Value: token, Path: "/"})
	w.WriteHeader(http.StatusNoContent)
}

// count is how many requests reached the backend at path.
func (b *backend) count(path string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, s := range b.received {
		if s.Path == path {
			n++
		}
	}
	return n
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
