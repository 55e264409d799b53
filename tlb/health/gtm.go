package health

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
)

// GTM serves per-VIP health for a DNS global traffic manager:
//
//	GET /vip/203.0.113.10 -> 200 "203.0.113.10 up healthy=2 total=3" while the VIP can serve,
//	                         503 "203.0.113.10 down healthy=0 total=3: no healthy gateway" otherwise,
//	                         404 for an unknown VIP.
//	GET /vip/             -> one line per VIP, IPv4 ones first.
//
// IPv6 VIPs are asked for the same way: GET /vip/2001:db8::10 (brackets
// and any spelling of the address are accepted; the answer writes its
// canonical form).
//
// A VIP with L7 services adds "l7-backends=R/T services" (R of its T L7
// services have a ready backend) and is down when R is 0.
//
// It answers from the health the director last decided (SetHealth), so
// GTM and the per-VIP announcements agree. Bodies are plain text. Mount
// it on a loopback or otherwise protected listener (it reveals which VIPs
// this director serves).
type GTM struct {
	mux *http.ServeMux

	mu   sync.RWMutex
	vips map[netip.Addr]VIPHealth
}

// NewGTM returns a GTM that knows no VIP yet.
func NewGTM() *GTM {
	g := &GTM{mux: http.NewServeMux(), vips: map[netip.Addr]VIPHealth{}}
	g.mux.HandleFunc("GET /vip/{vip}", g.serveVIP)
	g.mux.HandleFunc("GET /vip/{$}", g.serveAll)
	return g
}

// SetHealth replaces what is known: the health of every VIP served.
func (g *GTM) SetHealth(hs []VIPHealth) {
	m := make(map[netip.Addr]VIPHealth, len(hs))
	for _, h := range hs {
		m[h.VIP] = h
	}
	g.mu.Lock()
	g.vips = m
	g.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (g *GTM) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.mux.ServeHTTP(w, r) }

func (g *GTM) serveVIP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	vip, err := parseVIP(r.PathValue("vip"))
	if err != nil {
		http.Error(w, fmt.Sprintf("bad VIP %q: %v", r.PathValue("vip"), err), http.StatusBadRequest)
		return
	}
	g.mu.RLock()
	h, ok := g.vips[vip]
	g.mu.RUnlock()
	if !ok {
		http.Error(w, fmt.Sprintf("unknown VIP %s", vip), http.StatusNotFound)
		return
	}
	if !h.Up() {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = fmt.Fprintln(w, Line(h))
}

// parseVIP reads the VIP of a /vip/ request: an IPv4 or IPv6 address in
// any spelling ParseAddr takes, an IPv6 one optionally in brackets; a
// zone is refused (no VIP has one).
func parseVIP(s string) (netip.Addr, error) {
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	vip, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return netip.Addr{}, errors.New("not an IP address")
	case vip.Zone() != "":
		return netip.Addr{}, errors.New("an address with a zone is no VIP")
	}
	return vip.Unmap(), nil
}

func (g *GTM) serveAll(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	g.mu.RLock()
	hs := make([]VIPHealth, 0, len(g.vips))
	for _, h := range g.vips {
		hs = append(hs, h)
	}
	g.mu.RUnlock()
	slices.SortFunc(hs, func(a, b VIPHealth) int { return a.VIP.Compare(b.VIP) })
	for _, h := range hs {
		_, _ = fmt.Fprintln(w, Line(h))
	}
}

// Line renders one VIP's health as GTM answers it, e.g.
// "203.0.113.10 down healthy=2 total=2 l7-backends=0/2 services: no L7 service of the VIP has a ready backend".
func Line(h VIPHealth) string {
	var b strings.Builder
	state := "down"
	if h.Up() {
		state = "up"
	}
	fmt.Fprintf(&b, "%s %s healthy=%d total=%d", h.VIP, state, h.Healthy, h.Total)
	if h.L7Services > 0 {
		fmt.Fprintf(&b, " l7-backends=%d/%d services", h.L7Ready, h.L7Services)
	}
	if r := h.Reason(); r != "" {
		b.WriteString(": " + r)
	}
	return b.String()
}
