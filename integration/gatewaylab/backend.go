package gatewaylab

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tlbproject/tlb/integration/topo"
)

// ServedByHeader is the header in which a backend says who it is and
// through which gateway the request came: "web@app1 via 198.18.11.2".
const ServedByHeader = "X-Served-By"

// MaxDownload bounds /download?size=N.
const MaxDownload = 64 << 20

// Backend is one application endpoint: an HTTP server on a node of its
// own, answering for one upstream of the site. It answers
//
//	GET /healthz             200 (Envoy's and the directors' checks)
//	GET /download?size=N[&pace=D]  N bytes of a known pattern, DownloadChunk
//	                         bytes every D (DownloadPace by default); Fetch checks them
//	anything else            "web@app1 host=H path=P gateway=G": G is the
//	                         connection's peer, the gateway node's address
//
// until Stop, which closes its listener and every connection, as a
// killed process would.
type Backend struct {
	// Upstream is the site's upstream it serves (web, api, files).
	Upstream string
	// Node is where it runs.
	Node *topo.Node
	// Addr is its ip:port.
	Addr     string
	requests atomic.Int64
	mu       sync.Mutex
	srv      *http.Server
}

// StartBackend starts a backend of upstream on node at addr; it stops at
// the end of t.
func StartBackend(t topo.T, node *topo.Node, upstream, addr string) *Backend {
	t.Helper()
	b := &Backend{Upstream: upstream, Node: node, Addr: addr}
	b.Start(t)
	t.Cleanup(b.Stop)
	return b
}

// Name is "upstream@node".
func (b *Backend) Name() string { return b.Upstream + "@" + b.Node.Name }

// Requests counts the requests it answered, health checks left out.
func (b *Backend) Requests() int64 { return b.requests.Load() }

// Start (re)starts a stopped backend on its address.
func (b *Backend) Start(t topo.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv != nil {
		return
	}
	ln, err := b.Node.Listen("tcp", b.Addr)
	if err != nil {
		t.Fatalf("gatewaylab: backend %s on %s: %v", b.Name(), b.Addr, err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(b.serve)}
	b.srv = srv
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Logf("gatewaylab: backend %s: %v", b.Name(), err)
		}
	}()
}

// Stop closes the listener and every open connection at once.
func (b *Backend) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv != nil {
		_ = b.srv.Close()
		b.srv = nil
	}
}

func (b *Backend) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		_, _ = w.Write([]byte("ok\n"))
		return
	}
	b.requests.Add(1)
	gw, _, _ := net.SplitHostPort(r.RemoteAddr)
	w.Header().Set(ServedByHeader, b.Name()+" via "+gw)
	if r.URL.Path == "/download" {
		size, err := strconv.Atoi(r.URL.Query().Get("size"))
		if err != nil || size < 0 || size > MaxDownload {
			http.Error(w, "size: want 0.."+strconv.Itoa(MaxDownload), http.StatusBadRequest)
			return
		}
		pace := DownloadPace
		if p := r.URL.Query().Get("pace"); p != "" {
			if pace, err = time.ParseDuration(p); err != nil || pace < 0 || pace > time.Second {
				http.Error(w, "pace: want a duration 0..1s", http.StatusBadRequest)
				return
			}
		}
		writeDownload(w, size, pace)
		return
	}
	_, _ = fmt.Fprintf(w, "%s host=%s path=%s gateway=%s\n", b.Name(), r.Host, r.URL.Path, gw)
}

// Answer is what a backend's X-Served-By says.
type Answer struct {
	// Backend is "upstream@node".
	Backend string
	// Gateway is the address the request came from: the gateway node's.
	Gateway string
}

// ParseAnswer reads an X-Served-By header.
func ParseAnswer(h string) (Answer, error) {
	b, gw, ok := strings.Cut(h, " via ")
	if !ok || b == "" || gw == "" {
		return Answer{}, fmt.Errorf("gatewaylab: %s %q: want \"upstream@node via gateway\"", ServedByHeader, h)
	}
	return Answer{Backend: b, Gateway: gw}, nil
}
