// Package obs serves the observability endpoints every TLB binary exposes:
// Prometheus metrics on /metrics and health on /healthz and /readyz.
//
// It owns only its HTTP listener and the registry handed to it; it keeps no
// package-level state, so each binary (and each test) builds its own.
package obs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves metrics and health for one binary.
type Server struct {
	Registry *prometheus.Registry

	addr   string
	log    *slog.Logger
	ready  atomic.Bool
	reason atomic.Value // string: why not ready
	srv    *http.Server
	ln     net.Listener
}

// NewServer returns a Server for addr (host:port). The registry already
// carries the Go runtime and process collectors.
func NewServer(addr string, log *slog.Logger) *Server {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Server{Registry: reg, addr: addr, log: log}
	s.reason.Store("starting")
	return s
}

// SetReady marks the binary ready (reason is ignored) or not ready with a
// reason that /readyz reports.
func (s *Server) SetReady(ready bool, reason string) {
	s.ready.Store(ready)
	s.reason.Store(reason)
}

// Handler returns the HTTP handler, for callers that mount extra paths.
func (s *Server) Handler() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if s.ready.Load() {
			_, _ = fmt.Fprintln(w, "ready")
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "not ready: %v\n", s.reason.Load())
	})
	return mux
}

// Start listens on the configured address and serves mux (or the default
// handler when mux is nil) until Shutdown. It returns the bound address.
func (s *Server) Start(mux http.Handler) (string, error) {
	if s.addr == "" {
		return "", nil
	}
	if mux == nil {
		mux = s.Handler()
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return "", fmt.Errorf("listen for metrics and health on %s: %w", s.addr, err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("observability server stopped", "addr", s.addr, "err", err)
		}
	}()
	return ln.Addr().String(), nil
}

// Shutdown stops the HTTP server.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Shutdown(ctx)
}
