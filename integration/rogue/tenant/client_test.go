//go:build k8s

package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// client sends requests to one listener (VIP:port) whatever host they
// name; each on a new connection, redirects not followed.
type client struct {
	t    *testing.T
	vip  string
	http *http.Client
}

func clientOf(t *testing.T, vip string) *client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &client{t: t, vip: vip, http: &http.Client{
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

// reply is a response through Envoy; backend is what the backend
// received when it answered.
type reply struct {
	status  int
	header  http.Header
	body    string
	backend *seen
	// refused is set when nothing listens on the VIP.
	refused bool
}

// req is a request: method (default GET), host, path and headers.
type req struct {
	method  string
	host    string
	path    string
	headers map[string]string
}

func (c *client) do(r req) reply {
	c.t.Helper()
	out, err := c.try(r)
	if err != nil {
		c.t.Fatalf("%s http://%s%s through %s: %v", r.method, r.host, r.path, c.vip, err)
	}
	return out
}

// try is do without failing: a connection refused is a reply with
// refused set.
func (c *client) try(r req) (reply, error) {
	if r.method == "" {
		r.method = http.MethodGet
	}
	var body io.Reader
	if r.method != http.MethodGet && r.method != http.MethodHead {
		body = strings.NewReader("{}")
	}
	hr, err := http.NewRequest(r.method, "http://"+r.host+r.path, body)
	if err != nil {
		return reply{}, err
	}
	for k, v := range r.headers {
		hr.Header.Set(k, v)
	}
	resp, err := c.http.Do(hr)
	if errors.Is(err, syscall.ECONNREFUSED) {
		return reply{refused: true}, nil
	}
	if err != nil {
		return reply{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	out := reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if resp.Header.Get("Content-Type") == "application/json" {
		var s seen
		if json.Unmarshal(b, &s) == nil && s.Method != "" {
			out.backend = &s
		}
	}
	return out, nil
}

// cookies returns the cookies a response sets, by name.
func (r reply) cookies() map[string]string {
	out := map[string]string{}
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		out[c.Name] = c.Value
	}
	return out
}
