package dsl_test

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
)

func TestParseSeedExample(t *testing.T) {
	// The seed article's service, with its upstream named.
	src := `kind: gateway/service/v1
name: todolist
upstreams:
  - name: todolist
    endpoints: ["198.51.100.10:8082"]
routes:
  - pattern: ^/todolist/.*$
    target: todolist
    rewrite:
      old: ^/todolist/(.*)$
      new: /\1
`
	doc, err := dsl.Parse("todolist.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s := doc.Service
	if s == nil || s.Name != "todolist" || s.Group != "default" || s.Origin != "todolist.yaml" {
		t.Fatalf("service = %+v", s)
	}
	r := s.Routes[0]
	if r.Regex != `^/todolist/.*$` || r.Rewrite.Substitution != `/\1` || r.Targets[0].Upstream != "todolist" {
		t.Fatalf("route = %+v", r)
	}
	if r.Timeout != 0 || r.IdleTimeout != 0 {
		t.Fatalf("timeouts %v %v; zero means the defaults (1m, 10m)", r.Timeout, r.IdleTimeout)
	}
}

func TestParseDurations(t *testing.T) {
	src := "kind: gateway/service/v1\nname: s\ntimeout: 2m\nidleTimeout: \"off\"\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, target: u}\n  - {prefix: /x, target: u, timeout: 5s, idleTimeout: 30s}\n"
	doc, err := dsl.Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	rs := doc.Service.Routes
	if rs[0].Timeout != 2*time.Minute || rs[0].IdleTimeout != -1 || rs[1].Timeout != 5*time.Second || rs[1].IdleTimeout != 30*time.Second {
		t.Fatalf("routes = %+v", rs)
	}
}

func TestParseErrorsNameFileAndField(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"unknown top field":   {"kind: gateway/service/v1\nname: s\ninterceptors: []\n", `unknown field "interceptors"`},
		"wrong type":          {"kind: gateway/gateway/v1\nname: g\nlisteners:\n  - {name: l, vip: 203.0.113.1, port: eighty, protocol: HTTP}\n", "port"},
		"bad vip":             {"kind: gateway/gateway/v1\nname: g\nlisteners:\n  - {name: l, vip: 203.0.113.300, port: 80, protocol: HTTP}\n", "listeners[0].vip"},
		"bad protocol":        {"kind: gateway/gateway/v1\nname: g\nlisteners:\n  - {name: l, vip: 203.0.113.1, port: 80, protocol: QUIC}\n", "listeners[0].protocol"},
		"https without cert":  {"kind: gateway/gateway/v1\nname: g\nlisteners:\n  - {name: l, vip: 203.0.113.1, port: 443, protocol: HTTPS}\n", "listeners[0].certificates"},
		"target and targets":  {"kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, target: u, targets: [{upstream: u, weight: 1}]}\n", "routes[0]"},
		"zero weight":         {"kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: []}, {name: v, endpoints: []}]\nroutes:\n  - {prefix: /, targets: [{upstream: u, weight: 0}, {upstream: v, weight: 1}]}\n", "routes[0].targets[0].weight"},
		"prefix and pattern":  {"kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, pattern: ^/$, target: u}\n", "exactly one of prefix and pattern"},
		"bad host":            {"kind: gateway/service/v1\nname: s\nhosts: [\"a.*.com\"]\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, target: u}\n", "hosts[0]"},
		"upper-case header":   {"kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, target: u, headers: [{name: X-Canary, exact: \"1\"}]}\n", "routes[0].headers[0].name"},
		"no kind":             {"name: s\n", "kind: missing"},
		"bad request timeout": {"kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, target: u, timeout: \"soon\"}\n", "routes[0].timeout"},
		"bad listener ref":    {"kind: gateway/service/v1\nname: s\nlisteners: [public]\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, target: u}\n", "listeners[0]"},
		"bad delegation":      {"kind: gateway/service/v1\nname: s\ndelegations: [{prefix: api, namespaces: [b]}]\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, target: u}\n", "delegations[0].prefix"},
		"redirect on HTTPS":   {"kind: gateway/gateway/v1\nname: g\nlisteners:\n  - {name: l, vip: 203.0.113.1, port: 443, protocol: TCP, target: a/b, redirectHTTPS: true}\n", "listeners[0].redirectHTTPS"},
		"bad name":            {"kind: gateway/service/v1\nname: Bad_Name\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /, target: u}\n", "name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dsl.Parse("f.yaml", []byte(tc.src))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), "f.yaml") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q lacks the file or %q", err, tc.want)
			}
		})
	}
}

// TestBadFileRejectedAlone: a broken file keeps its last good version and
// the others keep being served.
func TestBadFileRejectedAlone(t *testing.T) {
	dir := t.TempDir()
	good := "kind: gateway/service/v1\nname: a\nupstreams: [{name: u, endpoints: [\"198.51.100.1:80\"]}]\nroutes:\n  - {prefix: /a, target: u}\n"
	other := strings.ReplaceAll(strings.ReplaceAll(good, "name: a", "name: b"), "/a", "/b")
	write := func(n, s string) {
		if err := os.WriteFile(dir+"/"+n, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", good)
	write("b.yaml", other)
	d := dsl.NewDir(dir, time.Now)
	cfg, errs, err := d.Load()
	if err != nil || len(errs) > 0 || len(cfg.Services) != 2 {
		t.Fatalf("load: %v %v %d", err, errs, len(cfg.Services))
	}
	write("a.yaml", "kind: gateway/service/v1\nname: a\nroutes: nope\n")
	write("c.yaml", "kind: nonsense\n")
	cfg, errs, _ = d.Load()
	if len(errs) != 2 {
		t.Fatalf("want 2 file errors, got %v", errs)
	}
	names := []string{}
	for _, s := range cfg.Services {
		names = append(names, s.Name+"@"+string(s.Origin))
	}
	// The bad a.yaml is left out, as a fresh reader of the same directory
	// would leave it out: no memory of its earlier good version.
	fresh, _, _ := dsl.NewDir(dir, time.Now).Load()
	if strings.Join(names, ",") != "b@b.yaml" || !reflect.DeepEqual(cfg, fresh) {
		t.Fatalf("served %v (fresh reader: %+v); want only b", names, fresh.Services)
	}
	write("a.yaml", good)
	if cfg, _, _ = d.Load(); len(cfg.Services) != 2 {
		t.Fatalf("a fixed file must be served again: %+v", cfg.Services)
	}
	_ = os.Remove(dir + "/a.yaml")
	cfg, _, _ = d.Load()
	if len(cfg.Services) != 1 || cfg.Services[0].Name != "b" {
		t.Fatalf("a deleted file must stop being served: %+v", cfg.Services)
	}
	if _, _, err := dsl.NewDir(dir+"/missing", time.Now).Load(); err == nil {
		t.Fatal("an unreadable directory must be an error, not an empty config")
	}
}

// FuzzParse: Parse never panics, and anything it accepts passes the
// model's own checks.
func FuzzParse(f *testing.F) {
	for _, n := range []string{"shop.yaml", "todolist.yaml", "gateway-public.yaml", "greeter.yaml", "payments.yaml", "reports.yaml"} {
		b, err := os.ReadFile("../testdata/config/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("kind: gateway/service/v1\nname: s\nroutes: [{prefix: /, target: u}]\n"))
	f.Add([]byte("kind: gateway/service/v1\nname: s\nupstreams:\n  - name: u\n    endpoints: []\n    healthCheck: {http: {path: /h, expectedStatuses: [200-299, 304]}, interval: 5s}\n" +
		"    outlierDetection: {consecutive5xx: 3, maxEjectionPercent: 50}\n    circuitBreakers: {maxRequests: 10}\n    slowStart: 30s\nroutes: [{prefix: /, target: u}]\n"))
	f.Add([]byte("kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: [], healthCheck: {grpc: {service: x}}, slowStart: \"off\"}]\nroutes: [{prefix: /, target: u, sticky: {cookie: c}}]\n"))
	for _, n := range []string{"route.yaml", "external.yaml"} {
		b, err := os.ReadFile("testdata/seed000/" + n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("kind: gateway/service/v1\nname: s\nupstreams: [{name: u, endpoints: [\"u.internal:80\"]}]\nroutes: [{prefix: /, target: u}, {prefix: /x, target: \"10.0.0.1:81\"}]\n"))
	f.Add([]byte("kind: gateway/gateway/v1\nname: g\nlisteners: [{name: l, vip: 192.0.2.1, port: 80, protocol: HTTP, default: true}]\n"))
	f.Add([]byte("kind: [\n"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := dsl.Parse("fuzz.yaml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if doc.Service != nil {
			s := *doc.Service
			if doc.JWTFiles != (dsl.JWTFiles{}) {
				// Its key is read by Dir, not Parse: until then the model
				// rightly refuses it (a JWT without a key). Check the rest.
				s.JWT = nil
				s.Routes = append([]model.Route(nil), s.Routes...)
				for i := range s.Routes {
					s.Routes[i].Auth = nil
				}
			}
			if len(doc.CAFiles) > 0 {
				// Its CA bundles are read by Dir too; check the rest.
				s.Upstreams = append([]model.Upstream(nil), s.Upstreams...)
				for i := range s.Upstreams {
					s.Upstreams[i].TLS = nil
				}
			}
			if err := model.CheckService(s); err != nil {
				t.Fatalf("accepted a service the model refuses: %v", err)
			}
		}
	})
}
