package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/internal/poll"
	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

// seedExample reads one of seed 000's DSL examples, kept byte for byte in
// l7/dsl/testdata/seed000.
func seedExample(t *testing.T, name string) string {
	t.Helper()
	root, err := envoyproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "l7", "dsl", "testdata", "seed000", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSeed000ExamplesThroughEnvoy: seed 000's own service files, word
// for word, served by l7 and the real Envoy. The first names no group (so
// "default"), no host, no listener and no upstream: its route's target
// todolist:8082 is resolved by Envoy through DNS, here a DNS server the
// test controls (l7 serve --dns-resolvers), and the gateway's listener
// serves it as the group's default listener. Its interceptors run in l7's
// authorization service with a real Redis: no session is a 401, a session
// reaches the backend, the path rewritten. Changing the DNS answer moves
// the traffic to the new address. The second example (an external
// interceptor at the service's interceptor address) replaces the first
// and is served too: its route runs its chain (401 without a session).
func TestSeed000ExamplesThroughEnvoy(t *testing.T) {
	dns := startDNS(t, "127.0.23.53:23053")
	b1, b2 := startBackend(t, "b1", "127.0.23.220", 8082), startBackend(t, "b2", "127.0.23.221", 8082)
	dns.set("todolist", b1.addr.Addr())
	redis := redisproc.StartForTest(t)
	sessions := sessionstore.NewRedis(sessionstore.NewClient(redis.Addr, "", ""), "")
	if err := sessions.Save(context.Background(), "seed-session-1", map[string]string{"user": "u-1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	vip := "127.0.23.18"
	port := freePort(t, vip, 23090)
	g := startGateway(t, setup{hostIP: "127.0.23.107", group: "default", authz: true,
		serve: []string{"--dns-resolvers=" + dns.addr.String(), "--authz-redis=" + redis.Addr},
		files: map[string]string{
			"gateway.yaml":  fmt.Sprintf("kind: gateway/gateway/v1\nname: public\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP, default: true}\n", vip, port),
			"todolist.yaml": seedExample(t, "route.yaml"),
		}})
	c := newClient(vip, port, "lms.example", nil)
	session := []string{"cookie", "session=seed-session-1"}

	t.Run("route: served through DNS, interceptors run", func(t *testing.T) {
		if r := c.get(t, "/todolist/tasks"); r.status != http.StatusUnauthorized || r.backend() != "" {
			t.Errorf("without a session: %d %q from %q, want the session interceptor's 401", r.status, r.body, r.backend())
		}
		r := c.get(t, "/todolist/tasks", session...)
		if r.status != http.StatusOK || r.body != "b1 lms.example/tasks" {
			t.Fatalf("with a session: %d %q, want b1 to answer for the rewritten path /tasks", r.status, r.body)
		}
		if n := dns.asked("todolist"); n == 0 {
			t.Errorf("Envoy never asked the test's DNS server for todolist")
		}
		if r := c.get(t, "/other", session...); r.status != http.StatusNotFound {
			t.Errorf("a path outside the pattern: %d, want 404", r.status)
		}
	})
	t.Run("a new DNS answer moves the traffic", func(t *testing.T) {
		dns.set("todolist", b2.addr.Addr())
		moved := time.Now()
		poll.Explained(t, time.Minute, "todolist's requests reach b2", func() (bool, string) {
			r := c.get(t, "/todolist/x", session...)
			return r.status == http.StatusOK && r.backend() == "b2", fmt.Sprintf("%d from %q", r.status, r.backend())
		})
		t.Logf("traffic on the new address %s after the DNS change (TTL 1s, refresh at least every 5s)", time.Since(moved).Round(100*time.Millisecond))
		before := b1.requests.Load()
		if got := c.spread(t, 20, "/todolist/x", session...); got["b2"] != 20 {
			t.Errorf("after the move 20 requests went to %v, want all on b2", got)
		}
		if n := b1.requests.Load() - before; n != 0 {
			t.Errorf("the old address still got %d requests", n)
		}
	})
	t.Run("external interceptor example", func(t *testing.T) {
		g.write(t, "todolist.yaml", seedExample(t, "external.yaml"))
		c.waitServed(t, "/todolist/x", http.StatusNotFound, session...)
		const create = "/api/public/v1/task/create"
		if r := c.do(http.MethodPost, create); r.err != nil || r.status != http.StatusUnauthorized {
			t.Errorf("POST %s without a session: %d %v, want the session interceptor's 401", create, r.status, r.err)
		}
		if r := c.get(t, "/api/public/v1/task/delete", session...); r.status != http.StatusNotFound {
			t.Errorf("a path outside the pattern: %d, want 404", r.status)
		}
	})
}

// TestDNSUpstreamSpreadsOverEveryAddress: an upstream named by DNS is a
// strict DNS cluster: every address of the answer is an endpoint and
// gets requests; an address dropped from the answer stops getting them.
// A name without an answer (NXDOMAIN) neither delays the gateway's start
// nor touches other services: its requests get 503.
func TestDNSUpstreamSpreadsOverEveryAddress(t *testing.T) {
	dns := startDNS(t, "127.0.23.53:23053")
	backends := []*backend{startBackend(t, "n1", "127.0.23.222", 23500), startBackend(t, "n2", "127.0.23.223", 23500), startBackend(t, "n3", "127.0.23.224", 23500)}
	var all []netip.Addr
	for _, b := range backends {
		all = append(all, b.addr.Addr())
	}
	dns.set("pool.internal", all...)
	vip := "127.0.23.19"
	port := freePort(t, vip, 23100)
	g := startGateway(t, setup{hostIP: "127.0.23.108", serve: []string{"--dns-resolvers=" + dns.addr.String()}, files: map[string]string{
		"gw.yaml": fmt.Sprintf("kind: gateway/gateway/v1\nname: dns\ngroup: edge\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP}\n", vip, port),
		"pool.yaml": `kind: gateway/service/v1
name: pool
group: edge
hosts: [pool.test]
listeners: [dns/web]
upstreams:
  - {name: main, endpoints: ["pool.internal:23500"], slowStart: "off"}
routes:
  - {prefix: /, target: main}
`,
		// A name that does not resolve: its own requests fail, nothing else.
		"ghost.yaml": `kind: gateway/service/v1
name: ghost
group: edge
hosts: [ghost.test]
listeners: [dns/web]
upstreams:
  - {name: main, endpoints: ["ghost.internal:80"]}
routes:
  - {prefix: /, target: main}
`,
	}})
	if r := newClient(vip, port, "ghost.test", nil).get(t, "/x"); r.status != http.StatusServiceUnavailable || r.body != "no healthy upstream" {
		t.Errorf("a name without an answer: %d %q, want Envoy's 503 no healthy upstream", r.status, r.body)
	}
	if dns.asked("ghost.internal") == 0 {
		t.Errorf("Envoy never asked for ghost.internal")
	}
	c := newClient(vip, port, "pool.test", nil)
	if got := c.spread(t, 30, "/x"); got["n1"] != 10 || got["n2"] != 10 || got["n3"] != 10 {
		t.Errorf("30 requests over three addresses: %v, want 10 each (round robin over every address)", got)
	}
	if v := g.stat(t, "cluster.pool/main.membership_total"); v != 3 {
		t.Errorf("membership_total = %d, want 3 endpoints", v)
	}
	dns.set("pool.internal", all[1:]...)
	poll.Explained(t, time.Minute, "the dropped address leaves the cluster", func() (bool, string) {
		v := g.stat(t, "cluster.pool/main.membership_total")
		return v == 2, fmt.Sprintf("membership_total %d", v)
	})
	before := backends[0].requests.Load()
	if got := c.spread(t, 20, "/x"); got["n2"] != 10 || got["n3"] != 10 {
		t.Errorf("after n1 left the answer: %v, want 10 on each of n2 and n3", got)
	}
	if n := backends[0].requests.Load() - before; n != 0 {
		t.Errorf("n1 got %d requests after it left the answer", n)
	}
}
