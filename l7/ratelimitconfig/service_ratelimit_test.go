//go:build ratelimit

package ratelimitconfig_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rlcommon "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	ratelimitfilter "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/l7/authz/redisproc"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/dslsource"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/ratelimit/rlsproc"
	"github.com/tlbproject/tlb/l7/ratelimitconfig"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/l7/xdsbuild"
)

const rlGateway = `kind: gateway/gateway/v1
name: gw
group: edge
listeners:
  - {name: web, vip: 203.0.113.1, port: 80, protocol: HTTP}
`

const rlShop = `kind: gateway/service/v1
name: shop
group: edge
hosts: [shop.example.com]
listeners: [gw/web]
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes:
  - {name: cart, prefix: /cart, target: u, rateLimit: {global: {perClientIP: {requests: 3, unit: hour}}}}
  - {name: home, prefix: /, target: u}
`

// rlShopChanged gives cart a tighter limit and limits home for everyone.
const rlShopChanged = `kind: gateway/service/v1
name: shop
group: edge
hosts: [shop.example.com]
listeners: [gw/web]
upstreams: [{name: u, endpoints: ["198.51.100.1:80"]}]
routes:
  - {name: cart, prefix: /cart, target: u, rateLimit: {global: {perClientIP: {requests: 1, unit: hour}}}}
  - {name: home, prefix: /, target: u, rateLimit: {global: {perRoute: {requests: 2, unit: hour}}}}
`

// rlBad is another service whose limit is invalid: its file is rejected.
const rlBad = `kind: gateway/service/v1
name: bad
group: edge
hosts: [bad.example.com]
listeners: [gw/web]
upstreams: [{name: u, endpoints: ["198.51.100.2:80"]}]
routes:
  - {name: all, prefix: /, target: u, rateLimit: {global: {perClientIP: {requests: 1, unit: day}}}}
`

// TestRateLimitServiceTakesOurConfig: the real envoyproxy/ratelimit
// service takes its configuration over xDS from serve's
// ServeRateLimitConfigs, fed by the DSL directory through the Reloader as
// in l7 serve, and answers the descriptors the translated routes make
// Envoy send: OK, then OVER_LIMIT; after a DSL change, the new limits; a
// bad file changes nothing else; with l7 stopped the limits stay, and an
// l7 restarted on the same address gives the service its limits again.
func TestRateLimitServiceTakesOurConfig(t *testing.T) {
	bin, err := rlsproc.Binary()
	if err != nil {
		t.Fatal(err)
	}
	redis := redisproc.StartForTest(t)
	clearOfHourEnd(t)

	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gw.yaml", rlGateway)
	write("shop.yaml", rlShop)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := model.Options{RateLimitService: &model.RateLimitService{Host: "127.0.0.1", Port: 8081}}
	// l7 serve's pipeline, with the gateways' xDS consumer before the
	// rate limit service's.
	servePipeline := func(ctx context.Context, configs ratelimitconfig.Configs) *pipeline.Pipeline {
		gateways := xds.New(ctx, log, nil, time.Now, xds.Options{Group: "edge"})
		return pipeline.New(model.NewResolver(), opts, time.Now, xdsbuild.New(gateways),
			&ratelimitconfig.Consumer{Group: "edge", Configs: configs, Log: log})
	}
	// On a unix socket, as deploy/ shares one between l7 and the service.
	sockDir, err := os.MkdirTemp("", "rl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "rl-xds.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srvCtx, stopServer := context.WithCancel(ctx)
	cs, done := ratelimitconfig.Serve(srvCtx, lis)
	pub := servePipeline(ctx, cs)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stopServer()
			<-done
		}
	})
	rl := &dslsource.Reloader{Dir: dsl.NewDir(dir, time.Now), Server: pub, Log: log}
	reload := func() {
		t.Helper()
		res := rl.Reload(ctx)
		if res.Unreadable != nil || len(res.Invalid) > 0 {
			t.Fatalf("reload: %v %v", res.Unreadable, res.Invalid)
		}
	}
	reload()

	svc, err := rlsproc.Start(ctx, bin, redis.Addr, append(rlsproc.XDSEnv("unix://"+sock, "ratelimit-0"),
		// Retry a lost xDS server quickly, as deploy/ does (default 10s).
		"XDS_CLIENT_BACKOFF_INITIAL_INTERVAL=200ms", "XDS_CLIENT_BACKOFF_MAX_INTERVAL=1s"), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		svc.Stop()
		if t.Failed() {
			t.Logf("rate limit service log:\n%s", svc.Log())
		}
	})
	conn, err := grpc.NewClient(svc.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	client := rlsv3.NewRateLimitServiceClient(conn)

	// What Envoy sends for a request to a route, as translated from the
	// same directory with the same options.
	call := func(routeName, clientIP string) rlsv3.RateLimitResponse_Code {
		t.Helper()
		domain, descs := envoyRequest(t, dir, opts, routeName, clientIP)
		resp, err := client.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: domain, Descriptors: descs, HitsAddend: 1})
		if err != nil {
			t.Fatalf("ShouldRateLimit: %v", err)
		}
		return resp.GetOverallCode()
	}
	expect := func(routeName, clientIP string, n int, want rlsv3.RateLimitResponse_Code) {
		t.Helper()
		for i := range n {
			if got := call(routeName, clientIP); got != want {
				t.Fatalf("%s from %s, call %d: %v, want %v", routeName, clientIP, i+1, got, want)
			}
		}
	}

	expect("shop/cart", "192.0.2.1", 3, rlsv3.RateLimitResponse_OK)
	expect("shop/cart", "192.0.2.1", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
	expect("shop/cart", "192.0.2.2", 1, rlsv3.RateLimitResponse_OK) // another client, its own count
	if _, descs := envoyRequest(t, dir, opts, "shop/home", "192.0.2.1"); len(descs) != 0 {
		t.Fatalf("shop/home sends descriptors %v, want none", descs)
	}

	// A bad file is rejected alone: the shop's limits stay as they were.
	write("bad.yaml", rlBad)
	if res := rl.Reload(ctx); len(res.FileErrors) != 1 {
		t.Fatalf("file errors = %v, want bad.yaml's", res.FileErrors)
	}
	expect("shop/cart", "192.0.2.3", 3, rlsv3.RateLimitResponse_OK)
	expect("shop/cart", "192.0.2.3", 1, rlsv3.RateLimitResponse_OVER_LIMIT)
	if err := os.Remove(filepath.Join(dir, "bad.yaml")); err != nil {
		t.Fatal(err)
	}

	// The DSL changes: the service applies the new limits (it takes the
	// snapshot asynchronously, so poll with fresh clients).
	write("shop.yaml", rlShopChanged)
	reload()
	deadline := time.Now().Add(10 * time.Second)
	for n := 10; ; n++ {
		ip := net.IPv4(192, 0, 2, byte(n)).String()
		if call("shop/cart", ip) == rlsv3.RateLimitResponse_OK && call("shop/cart", ip) == rlsv3.RateLimitResponse_OVER_LIMIT {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the service does not apply the changed limit after 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// home is now limited for every client together: 2 per hour.
	expect("shop/home", "198.51.100.7", 2, rlsv3.RateLimitResponse_OK)
	expect("shop/home", "198.51.100.8", 1, rlsv3.RateLimitResponse_OVER_LIMIT)

	// l7 stops: the service keeps the limits it has.
	stopServer()
	<-done
	stopped = true
	expect("shop/cart", "192.0.2.200", 1, rlsv3.RateLimitResponse_OK)
	expect("shop/cart", "192.0.2.200", 1, rlsv3.RateLimitResponse_OVER_LIMIT)

	// l7 comes back on the same address with other limits: the service
	// reconnects and applies them.
	_ = os.Remove(sock) // what a restarted l7's listenADS does
	lis2, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	write("shop.yaml", rlShop) // cart: 3 per client again, home unlimited
	cs2, done2 := ratelimitconfig.Serve(ctx, lis2)
	pub2 := servePipeline(ctx, cs2)
	t.Cleanup(func() { cancel(); <-done2 })
	rl.Server = pub2
	start := time.Now()
	reload()
	deadline = time.Now().Add(20 * time.Second)
	for n := 0; ; n++ {
		ip := net.IPv4(198, 18, byte(n/256), byte(n)).String()
		first, second := call("shop/cart", ip), call("shop/cart", ip) // 1 per hour would refuse the second
		if first == rlsv3.RateLimitResponse_OK && second == rlsv3.RateLimitResponse_OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the service does not take the limits of a restarted l7 after 20s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the service took the restarted l7's limits after %s", time.Since(start).Round(time.Millisecond))
}

// envoyRequest translates dir with opts for the gateways of group edge
// and returns what Envoy's ratelimit filter sends for a request to
// routeName from clientIP: the filter's domain and one descriptor per
// rate_limits entry, its entries from the actions (generic_key: its key
// and value; remote_address: the client's address). Any other action
// fails the test: it would not be what Envoy sends.
func envoyRequest(t *testing.T, dir string, opts model.Options, routeName, clientIP string) (string, []*rlcommon.RateLimitDescriptor) {
	t.Helper()
	cfg, errs, err := dsl.NewDir(dir, time.Now).Load()
	if err != nil {
		t.Fatal(err)
	}
	_ = errs // a bad file is left out, as l7 serve does
	set := translate.Group(model.Resolve(cfg, opts), "edge", translate.Gateway)
	domain := ""
	for _, res := range set[resource.ListenerType] {
		for _, fc := range res.(*listener.Listener).GetFilterChains() {
			for _, f := range fc.GetFilters() {
				var m hcm.HttpConnectionManager
				if f.GetTypedConfig().UnmarshalTo(&m) != nil {
					continue
				}
				for _, hf := range m.GetHttpFilters() {
					var rl ratelimitfilter.RateLimit
					if hf.GetName() == translate.GlobalRateLimitFilter && hf.GetTypedConfig().UnmarshalTo(&rl) == nil {
						domain = rl.GetDomain()
					}
				}
			}
		}
	}
	var rt *route.Route
	for _, res := range set[resource.RouteType] {
		for _, vh := range res.(*route.RouteConfiguration).GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				if r.GetName() == routeName {
					rt = r
				}
			}
		}
	}
	if rt == nil {
		t.Fatalf("no route %s", routeName)
	}
	var out []*rlcommon.RateLimitDescriptor
	for _, l := range rt.GetRoute().GetRateLimits() {
		d := &rlcommon.RateLimitDescriptor{}
		for _, a := range l.GetActions() {
			switch {
			case a.GetGenericKey() != nil:
				d.Entries = append(d.Entries, &rlcommon.RateLimitDescriptor_Entry{Key: a.GetGenericKey().GetDescriptorKey(), Value: a.GetGenericKey().GetDescriptorValue()})
			case a.GetRemoteAddress() != nil:
				d.Entries = append(d.Entries, &rlcommon.RateLimitDescriptor_Entry{Key: "remote_address", Value: clientIP})
			default:
				t.Fatalf("route %s: action %v is not modelled", routeName, a)
			}
		}
		out = append(out, d)
	}
	if len(out) > 0 && domain == "" {
		t.Fatalf("route %s sends descriptors but no listener runs the ratelimit filter", routeName)
	}
	return domain, out
}

// clearOfHourEnd waits, if the hour's window ends within 5 s, until it
// has: the service counts per-hour limits in windows aligned to the clock.
func clearOfHourEnd(t *testing.T) {
	now := time.Now()
	end := now.Truncate(time.Hour).Add(time.Hour)
	if end.Sub(now) < 5*time.Second {
		t.Logf("waiting %s for the hour's window to end", end.Sub(now))
		time.Sleep(end.Sub(now) + 100*time.Millisecond)
	}
}
