package authz

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// clientAddrGateway has two listeners on the site's VIP: "web" as every
// gateway (the peer is the client) and "proxied" behind one proxy
// (xffTrustedHops: 1).
const clientAddrGateway = `kind: gateway/gateway/v1
name: public
group: edge
listeners:
  - {name: web, vip: $VIP, port: $PORT, protocol: HTTP}
  - {name: proxied, vip: $VIP, port: 22081, protocol: HTTP, xffTrustedHops: 1}
`

// clientAddrApp limits each client to 2 requests (a rate of one token per
// 100 s: none comes back while the test runs).
const clientAddrApp = `kind: gateway/service/v1
name: limited
group: edge
hosts: [app.example.com]
listeners: [public/web, public/proxied]
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
rateLimit: {local: {requestsPerSecond: 0.01, burst: 2}}
routes:
  - {name: all, prefix: /, target: main}
`

// TestClientAddressThroughEnvoy (issue 22): the client address limits
// count is the peer's by default, whatever X-Forwarded-For a client sends,
// so a client cannot escape its limit by naming another address; a
// listener behind a proxy (xffTrustedHops: 1) counts each client the proxy
// names in X-Forwarded-For apart, and the same client together.
func TestClientAddressThroughEnvoy(t *testing.T) {
	s := startSite(t, siteOptions{hostIP: "127.0.25.5", files: map[string]string{"gateway.yaml": clientAddrGateway, "app.yaml": clientAddrApp}})
	host, _, _ := net.SplitHostPort(s.vip)
	proxied := net.JoinHostPort(host, "22081")

	statuses := func(c *client, xff ...string) string {
		var out []string
		for _, x := range xff {
			r := c.do(req{path: "/", headers: map[string]string{"x-forwarded-for": x}})
			out = append(out, fmt.Sprint(r.status))
		}
		return strings.Join(out, ",")
	}
	// A client on the default listener names a new address each time: the
	// third request is still its third.
	if got := statuses(s.client(t, "127.0.25.61"), "198.51.100.1", "198.51.100.2", "198.51.100.3"); got != "200,200,429" {
		t.Errorf("default listener, forged X-Forwarded-For: %s, want 200,200,429", got)
	}
	// Behind the proxy (one peer for everyone): each client it names has
	// its own count, the same client shares one.
	if got := statuses(clientOf(t, proxied, "127.0.25.62"), "198.51.100.1", "198.51.100.2", "198.51.100.3"); got != "200,200,200" {
		t.Errorf("proxied listener, three clients: %s, want 200,200,200", got)
	}
	if got := statuses(clientOf(t, proxied, "127.0.25.62"), "198.51.100.9", "198.51.100.9", "198.51.100.9"); got != "200,200,429" {
		t.Errorf("proxied listener, one client: %s, want 200,200,429", got)
	}
}
