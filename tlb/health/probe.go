package health

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
)

// Prober checks one real server once. Implementations must respect ctx.
type Prober interface {
	Probe(ctx context.Context, realServer netip.Addr) error
}

// DialFunc opens a connection; (*net.Dialer).DialContext is one. Passing
// another one lets probes leave from a chosen network namespace.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

func (d DialFunc) orDefault() DialFunc {
	if d == nil {
		return (&net.Dialer{}).DialContext
	}
	return d
}

// TCPProber succeeds when a TCP connection to Port opens.
type TCPProber struct {
	// Port is the health port.
	Port uint16
	// Dial opens the connection; a plain net.Dialer when nil.
	Dial DialFunc
}

// Probe opens and closes one connection.
func (p TCPProber) Probe(ctx context.Context, rs netip.Addr) error {
	addr := netip.AddrPortFrom(rs, p.Port).String()
	c, err := p.Dial.orDefault()(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("tcp health check of %s: %w", addr, err)
	}
	return c.Close()
}

// HTTPProber succeeds when GET http://<real server>:Port<Path> answers 2xx.
type HTTPProber struct {
	// Port and Path locate the health endpoint.
	Port uint16
	Path string
	// Client sends the request. It must not follow redirects off the real
	// server; NewHTTPProber builds one that follows none.
	Client *http.Client
}

// NewHTTPProber returns an HTTPProber whose client dials with dial (nil: a
// plain net.Dialer), follows no redirects and keeps no idle connections
// (each probe opens a fresh one, as a new flow would).
func NewHTTPProber(port uint16, path string, dial DialFunc) HTTPProber {
	return HTTPProber{Port: port, Path: path, Client: &http.Client{
		Transport:     &http.Transport{DisableKeepAlives: true, Proxy: nil, DialContext: dial.orDefault()},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Probe sends one GET.
func (p HTTPProber) Probe(ctx context.Context, rs netip.Addr) error {
	url := "http://" + net.JoinHostPort(rs.String(), strconv.Itoa(int(p.Port))) + p.Path
	return get(ctx, p.Client, url, 0)
}

// get sends one GET to url and wants status want (0: any 2xx).
func get(ctx context.Context, client *http.Client, url string, want int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("http health check of %s: %w", url, err)
	}
	req.Header.Set("User-Agent", "tlb-director-health")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("http health check of %s: %w", url, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	_ = resp.Body.Close()
	if ok := resp.StatusCode == want || (want == 0 && resp.StatusCode >= 200 && resp.StatusCode <= 299); !ok {
		return fmt.Errorf("http health check of %s: status %d", url, resp.StatusCode)
	}
	return nil
}

// BackendProbes probe L7 backends: a TCP connect, or an HTTP GET when the
// target names a path. Build it with NewBackendProbes.
type BackendProbes struct {
	dial   DialFunc
	client *http.Client
}

// NewBackendProbes returns BackendProbes that dial with dial (nil: a
// plain net.Dialer) and, over HTTP, follow no redirects and keep no idle
// connections.
func NewBackendProbes(dial DialFunc) BackendProbes {
	return BackendProbes{dial: dial.orDefault(), client: NewHTTPProber(0, "", dial).Client}
}

// ProbeBackend probes t once.
func (b BackendProbes) ProbeBackend(ctx context.Context, t Target) error {
	if t.Path != "" {
		return get(ctx, b.client, t.String(), t.Status)
	}
	c, err := b.dial(ctx, "tcp", t.Addr.String())
	if err != nil {
		return fmt.Errorf("tcp check of L7 backend %s: %w", t.Addr, err)
	}
	return c.Close()
}

// NewProber returns the Prober a defaulted, valid Config asks for; dial
// may be nil.
func NewProber(c Config, dial DialFunc) Prober {
	if c.Kind == KindHTTP {
		return NewHTTPProber(c.Port, c.Path, dial)
	}
	return TCPProber{Port: c.Port, Dial: dial}
}
