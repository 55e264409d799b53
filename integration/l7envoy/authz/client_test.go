package authz

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// appHost is the host every test service serves.
const appHost = "app.example.com"

// client sends requests for appHost to one listener, from one source
// address (the client IP Envoy sees).
type client struct {
	t    *testing.T
	http *http.Client
}

// client returns a client of the site's listener connecting from src
// ("" for any loopback address). Each request uses a new connection, and
// redirects are not followed.
func (s *site) client(t *testing.T, src string) *client {
	return clientOf(t, s.vip, src)
}

func clientOf(t *testing.T, vip, src string) *client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	return &client{t: t, http: &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, vip)
			},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// reply is a response through Envoy.
type reply struct {
	status int
	header http.Header
	body   string
	// backend is what the backend received, when it answered; nil when
	// the gateway answered itself.
	backend *seen
}

// req is a request: method (default GET), path, headers (Host is
// appHost unless a "host" header says otherwise), and the body of a
// method other than GET and HEAD (default "{}").
type req struct {
	method  string
	path    string
	headers map[string]string
	body    []byte
}

func (c *client) do(r req) reply {
	c.t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	var body io.Reader
	if r.method != http.MethodGet && r.method != http.MethodHead {
		body = strings.NewReader("{}")
		if r.body != nil {
			body = bytes.NewReader(r.body)
		}
	}
	hr, err := http.NewRequest(r.method, "http://"+appHost+r.path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range r.headers {
		if strings.EqualFold(k, "host") {
			hr.Host = v
			continue
		}
		hr.Header.Set(k, v)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		c.t.Fatalf("%s %s through envoy: %v", r.method, r.path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: reading the body: %v", r.method, r.path, err)
	}
	out := reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if resp.Header.Get("Content-Type") == "application/json" {
		var s seen
		if json.Unmarshal(b, &s) == nil && s.Method != "" {
			out.backend = &s
		}
	}
	return out
}

// cookies returns the cookies a response sets, by name.
func (r reply) cookies() map[string]string {
	out := map[string]string{}
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		out[c.Name] = c.Value
	}
	return out
}
