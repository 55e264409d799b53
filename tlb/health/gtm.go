package health

import (
	"fmt"
	"net/http"
	"net/netip"
	"sync"
)

// GTM serves per-VIP health for a DNS global traffic manager:
//
//	GET /vip/203.0.113.10 -> 200 "up 2/3 ..." while a real server is healthy,
//	                         503 "down 0/3 ..." otherwise, 404 for an unknown VIP.
//	GET /vip/             -> one line per VIP.
//
// Bodies are plain text. It reads state only; mount it on a loopback or
// otherwise protected listener (it reveals which VIPs this director serves).
type GTM struct {
	up  UpSource
	mux *http.ServeMux

	mu   sync.RWMutex
	vips VIPTable
}

// NewGTM returns a GTM that asks up about real servers.
func NewGTM(up UpSource) *GTM {
	g := &GTM{up: up, mux: http.NewServeMux(), vips: VIPTable{}}
	g.mux.HandleFunc("GET /vip/{vip}", g.serveVIP)
	g.mux.HandleFunc("GET /vip/{$}", g.serveAll)
	return g
}

// SetVIPs replaces the VIP table.
func (g *GTM) SetVIPs(v VIPTable) {
	cp := make(VIPTable, len(v))
	for vip, rss := range v {
		cp[vip] = append([]netip.Addr(nil), rss...)
	}
	g.mu.Lock()
	g.vips = cp
	g.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (g *GTM) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.mux.ServeHTTP(w, r) }

func (g *GTM) serveVIP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	vip, err := netip.ParseAddr(r.PathValue("vip"))
	if err != nil {
		http.Error(w, fmt.Sprintf("bad VIP %q: not an IP address", r.PathValue("vip")), http.StatusBadRequest)
		return
	}
	g.mu.RLock()
	rss, ok := g.vips[vip]
	g.mu.RUnlock()
	if !ok {
		http.Error(w, fmt.Sprintf("unknown VIP %s", vip), http.StatusNotFound)
		return
	}
	h := Evaluate(VIPTable{vip: rss}, g.up)[0]
	if !h.Up() {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = fmt.Fprintln(w, line(h))
}

func (g *GTM) serveAll(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	g.mu.RLock()
	hs := Evaluate(g.vips, g.up)
	g.mu.RUnlock()
	for _, h := range hs {
		_, _ = fmt.Fprintln(w, line(h))
	}
}

func line(h VIPHealth) string {
	state := "down"
	if h.Up() {
		state = "up"
	}
	return fmt.Sprintf("%s %s healthy=%d total=%d", h.VIP, state, h.Healthy, h.Total)
}
