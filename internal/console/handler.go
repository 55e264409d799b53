package console

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/netip"
	"time"
)

//go:embed templates/*.html
var templateFiles embed.FS

// Snapshotter reads every source once; Collector is one.
type Snapshotter interface {
	Collect(ctx context.Context) Snapshot
}

// Handler serves the console: GET / (inventory, VIPs, problems,
// components, API objects; with ?format=text the same state as plain
// text) and GET /vip/{ip} (one VIP in detail).
type Handler struct {
	src  Snapshotter
	log  *slog.Logger
	tmpl *template.Template
	mux  *http.ServeMux
}

// NewHandler returns the console's HTTP handler reading src on every
// request; log (nil: discard) gets render failures.
func NewHandler(src Snapshotter, log *slog.Logger) (*Handler, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t, err := template.New("console").Funcs(template.FuncMap{
		"ts":    func(t time.Time) string { return fmtTime(t) },
		"pct":   percent,
		"float": func(f float64) string { return fmt.Sprintf("%g", f) },
	}).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("parse console templates: %w", err)
	}
	h := &Handler{src: src, log: log, tmpl: t, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /{$}", h.serveIndex)
	h.mux.HandleFunc("GET /vip/{vip}", h.serveVIP)
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	v := BuildView(h.src.Collect(r.Context()))
	if r.URL.Query().Get("format") == "text" {
		var buf bytes.Buffer
		if err := WriteText(&buf, v); err != nil {
			h.log.Error("render console text", "err", err)
			http.Error(w, "cannot render the summary", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(buf.Bytes())
		return
	}
	h.render(w, http.StatusOK, "index", v)
}

// vipPage is the data of /vip/{ip}.
type vipPage struct {
	View
	VIP   VIPRow
	Found bool
}

func (h *Handler) serveVIP(w http.ResponseWriter, r *http.Request) {
	addr, err := netip.ParseAddr(r.PathValue("vip"))
	if err != nil {
		http.Error(w, "not an IP address", http.StatusBadRequest)
		return
	}
	v := BuildView(h.src.Collect(r.Context()))
	p := vipPage{View: v}
	for _, row := range v.VIPs {
		if row.addr == addr {
			p.VIP, p.Found = row, true
			break
		}
	}
	code := http.StatusOK
	if !p.Found {
		code = http.StatusNotFound
		p.VIP.Address = addr.String()
	}
	h.render(w, code, "vip", p)
}

// render executes the template into a buffer first, so that a failure
// is a clean 500 rather than half a page.
func (h *Handler) render(w http.ResponseWriter, code int, name string, data any) {
	var buf bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		h.log.Error("render console page", "page", name, "err", err)
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// percent is used of used+free, in whole percent ("-" when empty).
func percent(used, free int64) string {
	if used+free <= 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", used*100/(used+free))
}
