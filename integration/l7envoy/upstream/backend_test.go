package upstream

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// backend is a real HTTP server on a loopback address of the test's
// range that answers with its name (body and x-backend header) and counts
// what it serves. Health checks (/healthz) are counted apart from
// requests, so a test can tell "Envoy stopped sending it traffic" from
// "Envoy stopped checking it".
type backend struct {
	name string
	addr netip.AddrPort

	requests atomic.Int64 // every request but /healthz
	checks   atomic.Int64 // /healthz
	health   atomic.Int32 // status /healthz answers (200 unless set)
	fail     atomic.Int32 // status every other request answers (0: 200)
	delay    atomic.Int64 // nanoseconds to wait before answering

	mu       sync.Mutex
	hold     chan struct{} // non-nil: requests wait until it is closed
	seen     map[string]bool
	lastHdr  http.Header
	lastProt string
	sni      []string // server names of TLS handshakes
	alpn     []string // protocols negotiated
	inflight atomic.Int64
}

// startBackend serves on ip:port (port 0: any) until the test ends.
func startBackend(t *testing.T, name, ip string, port int) *backend {
	t.Helper()
	return startBackendTLS(t, name, ip, port, nil)
}

// startBackendTLS is startBackend over TLS with tlsCfg (nil: plain HTTP).
// The handshakes' server names and protocols are recorded.
func startBackendTLS(t *testing.T, name, ip string, port int, tlsCfg *tls.Config) *backend {
	t.Helper()
	b := &backend{name: name, seen: map[string]bool{}}
	b.health.Store(http.StatusOK)
	lis, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err != nil {
		t.Fatalf("backend %s: %v", name, err)
	}
	b.addr = netip.MustParseAddrPort(lis.Addr().String())
	if tlsCfg != nil {
		cfg := tlsCfg.Clone()
		cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			b.mu.Lock()
			b.sni = append(b.sni, hello.ServerName)
			b.mu.Unlock()
			return nil, nil
		}
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			b.mu.Lock()
			b.alpn = append(b.alpn, cs.NegotiatedProtocol)
			b.mu.Unlock()
			return nil
		}
		lis = tls.NewListener(lis, cfg)
	}
	// Refused handshakes are what some tests want: not worth a log line.
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() {
		b.release()
		_ = srv.Close()
	})
	return b
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-backend", b.name)
	if r.URL.Path == "/healthz" {
		b.checks.Add(1)
		w.WriteHeader(int(b.health.Load()))
		return
	}
	b.requests.Add(1)
	b.inflight.Add(1)
	defer b.inflight.Add(-1)
	b.mu.Lock()
	b.lastHdr = r.Header.Clone()
	b.lastProt = r.Proto
	hold := b.hold
	// x-fail-first: ID answers 503 to the first request of that ID;
	// x-slow-first: ID keeps the first one waiting (retries' tests).
	first, slow := false, false
	if id := r.Header.Get("x-fail-first"); id != "" && !b.seen["fail/"+id] {
		b.seen["fail/"+id], first = true, true
	}
	if id := r.Header.Get("x-slow-first"); id != "" && !b.seen["slow/"+id] {
		b.seen["slow/"+id], slow = true, true
	}
	b.mu.Unlock()
	if slow {
		select {
		case <-time.After(time.Minute):
		case <-r.Context().Done():
			return
		}
	}
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if d := time.Duration(b.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case first:
		w.WriteHeader(http.StatusServiceUnavailable)
	case b.fail.Load() != 0:
		w.WriteHeader(int(b.fail.Load()))
	}
	_, _ = fmt.Fprintf(w, "%s %s%s", b.name, r.Host, r.URL.Path)
}

// holdRequests makes requests wait until release.
func (b *backend) holdRequests() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hold == nil {
		b.hold = make(chan struct{})
	}
}

// release lets held requests answer and stops holding new ones.
func (b *backend) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hold != nil {
		close(b.hold)
		b.hold = nil
	}
}

// header returns the last request's headers.
func (b *backend) header() http.Header {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastHdr
}

// proto returns the last request's protocol ("HTTP/1.1", "HTTP/2.0").
func (b *backend) proto() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastProt
}

// handshakes returns the server names and protocols of the TLS
// handshakes so far.
func (b *backend) handshakes() (sni, alpn []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.sni...), append([]string(nil), b.alpn...)
}

// endpoint is the backend's address as a DSL endpoint.
func (b *backend) endpoint() string { return b.addr.String() }
