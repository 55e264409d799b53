package edge

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tlbproject/tlb/integration/envoyproc"
)

// backendIP is where the tests' backends listen (ports chosen by the
// kernel); gateways' VIPs and node addresses are other addresses of
// 127.0.21.0/24, one pair per test.
const backendIP = "127.0.21.2"

// seen is what a backend saw of a request, as it answers it.
type seen struct {
	Backend string      `json:"backend"`
	Method  string      `json:"method"`
	Path    string      `json:"path"`
	Host    string      `json:"host"`
	Header  http.Header `json:"header"`
	Body    string      `json:"body"`
}

// backend is an HTTP server that answers every request with what it saw
// (JSON), except paths holding /status/NNN (that status, body "backend
// NNN") and ending in /ws (a WebSocket echo). Every answer carries
// x-backend (its name), server and x-powered-by.
type backend struct {
	name string
	srv  *httptest.Server
}

// startBackend starts a backend named name (it says so in each answer's
// x-backend header).
func startBackend(t *testing.T, name string) *backend {
	t.Helper()
	l, err := net.Listen("tcp", backendIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{name: name}
	b.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(b.serve), ReadHeaderTimeout: 10 * time.Second}}
	b.srv.Start()
	t.Cleanup(b.srv.Close)
	return b
}

// addr is the backend's ip:port, an upstream endpoint.
func (b *backend) addr() string { return b.srv.Listener.Addr().String() }

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-backend", b.name)
	w.Header().Set("server", "backend/1.0") // the gateway must hide it
	w.Header().Set("x-powered-by", "backend")
	if strings.HasSuffix(r.URL.Path, "/ws") {
		c, err := upgrader.Upgrade(w, r, http.Header{"x-backend": {b.name}})
		if err != nil {
			return
		}
		defer func() { _ = c.Close() }()
		for {
			kind, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(kind, append([]byte(b.name+" echoes "), msg...)); err != nil {
				return
			}
		}
	}
	if i := strings.Index(r.URL.Path, "/status/"); i >= 0 {
		n, _ := strconv.Atoi(r.URL.Path[i+len("/status/"):])
		w.WriteHeader(n)
		_, _ = fmt.Fprintf(w, "backend %d", n)
		return
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("content-type", "application/json")
	_ = json.NewEncoder(w).Encode(seen{Backend: b.name, Method: r.Method, Path: r.URL.RequestURI(), Host: r.Host, Header: r.Header, Body: string(body)})
}

// startGateway writes the DSL files (name -> content; a name with a
// slash makes its directory) and starts l7 serve and Envoy for group
// "edge" with hostIP as the node's address; it returns when Envoy has
// taken its first config.
func startGateway(t *testing.T, hostIP string, files map[string]string) *envoyproc.Gateway {
	t.Helper()
	dir, err := os.MkdirTemp("", "edge")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cfg := filepath.Join(dir, "dsl")
	writeFiles(t, cfg, files)
	return envoyproc.StartT(t, envoyproc.Options{Group: "edge", Dir: filepath.Join(dir, "gw"), HostIP: hostIP,
		Serve: []string{"--config=" + cfg, "--cert-dir=" + cfg}})
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// reply is an answer through the gateway, with what the backend saw
// when a backend answered with its JSON.
type reply struct {
	Status int
	Header http.Header
	Body   string
	Saw    *seen
	// PeerCN is the common name of the certificate the gateway showed
	// (HTTPS only).
	PeerCN string
}

// request describes one request of a table.
type request struct {
	Method string
	URL    string // scheme and host pick SNI and Host; the client dials the listener
	Header map[string]string
	Body   string
}

// send makes the request with c and reads the whole answer.
func send(t *testing.T, c *http.Client, rq request) reply {
	t.Helper()
	r, err := trySend(c, rq)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// trySend is send returning the error (a refused certificate, say).
func trySend(c *http.Client, rq request) (reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := rq.Method
	if m == "" {
		m = http.MethodGet
	}
	var body io.Reader
	if rq.Body != "" {
		body = strings.NewReader(rq.Body)
	}
	req, err := http.NewRequestWithContext(ctx, m, rq.URL, body)
	if err != nil {
		return reply{}, err
	}
	for k, v := range rq.Header {
		if strings.EqualFold(k, "host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: %w", m, rq.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: reading the body: %w", m, rq.URL, err)
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		r.PeerCN = resp.TLS.PeerCertificates[0].Subject.CommonName
	}
	if resp.Header.Get("x-backend") != "" && strings.HasPrefix(resp.Header.Get("content-type"), "application/json") {
		var s seen
		if err := json.Unmarshal(b, &s); err == nil {
			r.Saw = &s
		}
	}
	return r, nil
}

// plainClient reaches the listener at addr over plain HTTP.
func plainClient(addr string) *http.Client { return envoyproc.ClientTo(addr, nil, false) }

// tlsClient reaches the HTTPS listener at addr, verifying its
// certificate against ca.
func tlsClient(addr string, ca *testCA) *http.Client {
	return envoyproc.ClientTo(addr, &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12}, false)
}

// sawHeader is the backend's view of header h ("" when absent or when no
// backend answered), and whether it was there.
func (r reply) sawHeader(h string) (string, bool) {
	if r.Saw == nil {
		return "", false
	}
	v, ok := r.Saw.Header[http.CanonicalHeaderKey(h)]
	return strings.Join(v, ","), ok
}

// wantStatus fails unless the reply has the status.
func (r reply) wantStatus(t *testing.T, want int) {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d (body %q, headers %v)", r.Status, want, truncate(r.Body, 300), r.Header)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// errorAs is errors.As for a target of the error's own type.
func errorAs[E error](err error, target *E) bool { return errors.As(err, target) }
