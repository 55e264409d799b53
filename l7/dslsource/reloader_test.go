package dslsource_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/dslsource"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/l7/xdsbuild"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// copyExample copies the example config directory to a temp dir.
func copyExample(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := "../testdata/config"
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func newReloader(t *testing.T, dir string) (*dslsource.Reloader, *xds.Server, *syncBuffer) {
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := xds.New(ctx, log, nil, time.Now, xds.Options{Group: "edge"})
	pub := pipeline.New(model.NewResolver(), model.Options{}, time.Now, xdsbuild.New(srv))
	return &dslsource.Reloader{Dir: dsl.NewDir(dir, time.Now), Server: pub, Log: log}, srv, logs
}

func sameVersions(a, b map[string]map[string]string) bool { return maps.EqualFunc(a, b, maps.Equal) }

// TestBadInputChangesNothing: each bad change gets a clear error naming
// the file and field (or the objects in conflict), and the served versions
// stay exactly as before.
func TestBadInputChangesNothing(t *testing.T) {
	for name, tc := range map[string]struct {
		file, body string
		want       []string // substrings of the error
	}{
		"unknown field":                   {"bad.yaml", "kind: gateway/service/v1\nname: bad\nupstreams: [{name: u, endpoints: [\"198.51.100.9:80\"]}]\nroutes:\n  - prefix: /bad\n    target: u\n    colour: red\n", []string{"bad.yaml", `unknown field "colour"`}},
		"bad regex":                       {"bad.yaml", "kind: gateway/service/v1\nname: bad\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - pattern: \"^/(\"\n    target: u\n", []string{"bad.yaml", "routes[0].pattern", "RE2"}},
		"bad duration":                    {"bad.yaml", "kind: gateway/service/v1\nname: bad\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - prefix: /x\n    target: u\n    timeout: 5 parsecs\n", []string{"bad.yaml", "routes[0].timeout", "5 parsecs"}},
		"bad endpoint":                    {"bad.yaml", "kind: gateway/service/v1\nname: bad\nupstreams: [{name: u, endpoints: [\"todo_list:8082\"]}]\nroutes:\n  - prefix: /x\n    target: u\n", []string{"bad.yaml", "upstreams[0].endpoints[0]", "ip:port or host:port", "\"todo_list\" is not a DNS name"}},
		"dangling target":                 {"bad.yaml", "kind: gateway/service/v1\nname: bad\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - prefix: /x\n    target: nope\n", []string{"bad.yaml", "routes[0].targets[0].upstream", `no upstream "nope"`}},
		"unknown kind":                    {"bad.yaml", "kind: gateway/ingress/v9\nname: bad\n", []string{"bad.yaml", "kind", "gateway/ingress/v9"}},
		"not yaml":                        {"bad.yaml", "kind: [\n", []string{"bad.yaml"}},
		"duplicate route in a file":       {"bad.yaml", "kind: gateway/service/v1\nname: bad\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /x, target: u}\n  - {prefix: /x, target: u}\n", []string{"bad.yaml", "routes[1]", "duplicate route"}},
		"duplicate route across services": {"zzz.yaml", "kind: gateway/service/v1\nname: zzz\ngroup: edge\nhosts: [shop.example.com]\nupstreams: [{name: u, endpoints: []}]\nroutes:\n  - {prefix: /cart, target: u}\n", []string{"zzz.yaml", `service "zzz"`, "routes[0]", "duplicate route", `service "shop"`, "shop.yaml"}},
		"port conflict":                   {"rogue.yaml", "kind: gateway/gateway/v1\nname: rogue\ngroup: edge\nlisteners:\n  - {name: db, vip: 203.0.113.10, port: 443, protocol: TCP, target: payments/db}\n", []string{"rogue.yaml", `gateway "rogue"`, "listeners[0]", "port conflict", "203.0.113.10:443", `gateway "public"`}},
		"duplicate SNI":                   {"rogue.yaml", "kind: gateway/gateway/v1\nname: rogue\ngroup: edge\nlisteners:\n  - name: s\n    vip: 203.0.113.20\n    port: 443\n    protocol: HTTPS\n    certificates:\n      - {name: c, sni: [shop.example.com], certFile: certs/shop.crt, keyFile: certs/shop.key}\n      - {name: d, sni: [shop.example.com], certFile: certs/shop.crt, keyFile: certs/shop.key}\n", []string{"rogue.yaml", "duplicate filter chain match", "shop.example.com"}},
		"missing key file":                {"rogue.yaml", "kind: gateway/gateway/v1\nname: rogue\ngroup: edge\nlisteners:\n  - name: s\n    vip: 203.0.113.20\n    port: 443\n    protocol: HTTPS\n    certificates: [{name: c, sni: [x.example.com], certFile: certs/shop.crt, keyFile: certs/none.key}]\n", []string{"rogue.yaml", "keyFile", "none.key"}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyExample(t)
			rl, srv, logs := newReloader(t, dir)
			first := rl.Reload(context.Background())
			if len(first.FileErrors) > 0 || len(first.Problems) > 0 || len(first.Invalid) > 0 {
				t.Fatalf("example config: %v %v %v", first.FileErrors, first.Problems, first.Invalid)
			}
			before := srv.Versions()
			path := filepath.Join(dir, tc.file)
			old, _ := os.ReadFile(path)
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			res := rl.Reload(context.Background())
			var msgs []string
			for _, e := range res.FileErrors {
				msgs = append(msgs, e.Error())
			}
			for _, p := range res.Problems {
				msgs = append(msgs, p.Error())
			}
			all := strings.Join(msgs, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("errors lack %q:\n%s", w, all)
				}
			}
			if !sameVersions(before, srv.Versions()) {
				t.Errorf("served versions changed after a bad input:\nbefore %v\nafter  %v", before, srv.Versions())
			}
			if len(res.Changed) > 0 {
				t.Errorf("snapshots swapped after a bad input: %v", res.Changed)
			}
			if !strings.Contains(logs.String(), tc.file) {
				t.Errorf("the log does not name %s", tc.file)
			}
			// Fixing the input serves the same thing again.
			if old != nil {
				_ = os.WriteFile(path, old, 0o600)
			} else {
				_ = os.Remove(path)
			}
			rl.Reload(context.Background())
			if !sameVersions(before, srv.Versions()) {
				t.Errorf("versions differ after the fix")
			}
		})
	}
}

// TestBrokenFileKeepsItsLastGoodVersion (issue 22): when a served file
// turns bad, it is reported and its last good version stays served, as
// docs/l7.md says (on main the service was dropped at once); deleting the
// file stops serving it. A replica that starts while the file is bad never
// saw a good version and serves without it: the documented price.
func TestBrokenFileKeepsItsLastGoodVersion(t *testing.T) {
	dir := copyExample(t)
	rl, srv, logs := newReloader(t, dir)
	rl.Reload(context.Background())
	before := srv.Versions()
	shop := filepath.Join(dir, "shop.yaml")
	if err := os.WriteFile(shop, []byte("kind: gateway/service/v1\nname: shop\ngroup: edge\nroutes: 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := rl.Reload(context.Background())
	if len(res.FileErrors) != 1 || !strings.Contains(res.FileErrors[0].Error(), "shop.yaml") || !strings.Contains(logs.String(), "shop.yaml") {
		t.Fatalf("the broken file is not reported: %v", res.FileErrors)
	}
	if !sameVersions(before, srv.Versions()) || len(res.Changed) > 0 {
		t.Fatalf("the broken file's last good version is no longer served:\nbefore %v\nafter  %v", before, srv.Versions())
	}
	fresh, freshSrv, _ := newReloader(t, dir)
	fresh.Reload(context.Background())
	if sameVersions(srv.Versions(), freshSrv.Versions()) {
		t.Fatal("a replica started while the file is bad cannot have its last good version")
	}
	if err := os.Remove(shop); err != nil {
		t.Fatal(err)
	}
	rl.Reload(context.Background())
	if !sameVersions(srv.Versions(), freshSrv.Versions()) {
		t.Fatalf("a deleted file is still served:\nrunning %v\nfresh   %v", srv.Versions(), freshSrv.Versions())
	}
}

// TestGoodChangeIsServed makes sure the check above can fail: a good
// change does change versions.
func TestGoodChangeIsServed(t *testing.T) {
	dir := copyExample(t)
	rl, srv, _ := newReloader(t, dir)
	rl.Reload(context.Background())
	before := srv.Versions()
	body := "kind: gateway/service/v1\nname: extra\ngroup: edge\nhosts: [extra.example.com]\nlisteners: [public/api]\nupstreams: [{name: u, endpoints: [\"198.51.100.99:80\"]}]\nroutes:\n  - {prefix: /, target: u}\n"
	if err := os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	res := rl.Reload(context.Background())
	if len(res.Changed) == 0 || sameVersions(before, srv.Versions()) {
		t.Fatalf("a good change was not served: %v", res.Changed)
	}
	if before["gateway/edge"]["type.googleapis.com/envoy.config.listener.v3.Listener"] != srv.Versions()["gateway/edge"]["type.googleapis.com/envoy.config.listener.v3.Listener"] {
		t.Errorf("adding a service changed the listeners' version")
	}
}

// keyLines returns the base64 lines of the example key: the secret part.
func keyLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../testdata/config/certs/shop.key")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatal("example key has no body")
	}
	return out
}

// keyForms is the key's body lines plus the whole key in base64, as it
// would appear in a JSON or YAML rendering of bytes.
func keyForms(t *testing.T) []string {
	b, err := os.ReadFile("../testdata/config/certs/shop.key")
	if err != nil {
		t.Fatal(err)
	}
	return append(keyLines(t), base64.StdEncoding.EncodeToString(b)[:40])
}

// TestKeyNeverLogged: key bytes do not appear in logs, in any fmt or
// slog rendering of the model, or in JSON.
func TestKeyNeverLogged(t *testing.T) {
	dir := copyExample(t)
	rl, _, logs := newReloader(t, dir)
	res := rl.Reload(context.Background())
	// Also a conflict and a bad file, which log objects and errors.
	_ = os.WriteFile(filepath.Join(dir, "rogue.yaml"), []byte("kind: gateway/gateway/v1\nname: rogue\ngroup: edge\nlisteners:\n  - name: s\n    vip: 203.0.113.20\n    port: 443\n    protocol: HTTPS\n    certificates: [{name: c, sni: [shop.example.com], certFile: certs/shop.crt, keyFile: certs/shop.key}]\n"), 0o600)
	rl.Reload(context.Background())

	cfg, _, _ := rl.Dir.Load()
	if len(cfg.Certificates) == 0 || cfg.Certificates[0].Key.Empty() {
		t.Fatal("the example certificate was not loaded; the test would prove nothing")
	}
	var dump bytes.Buffer
	fmt.Fprintf(&dump, "%v\n%+v\n%#v\n%s\n%q\n%x\n", cfg, cfg, cfg, cfg.Certificates[0].Key, cfg.Certificates[0].Key, cfg.Certificates[0].Key)
	j, _ := json.Marshal(cfg)
	dump.Write(j)
	slog.New(slog.NewTextHandler(&dump, nil)).Info("config", "cfg", cfg, "cert", cfg.Certificates[0], "key", cfg.Certificates[0].Key)
	slog.New(slog.NewJSONHandler(&dump, nil)).Info("config", "cert", cfg.Certificates[0], "key", cfg.Certificates[0].Key)
	for _, l := range keyForms(t) {
		if strings.Contains(logs.String(), l) {
			t.Errorf("the server log contains key material")
		}
		if strings.Contains(dump.String(), l) {
			t.Errorf("a rendering of the model contains key material:\n%s", dump.String())
		}
	}
	if !strings.Contains(dump.String(), "[REDACTED]") {
		t.Errorf("the key was not rendered as [REDACTED]")
	}
	_ = res
}

// TestRunWatchesTheDirectory: a file written after start is served
// without a restart, and a file deleted stops being served.
func TestRunWatchesTheDirectory(t *testing.T) {
	dir := copyExample(t)
	rl, srv, _ := newReloader(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rl.Run(ctx, 20*time.Millisecond, time.Hour) }()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, cond func(map[string]map[string]string) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond(srv.Versions()) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s: %v", what, srv.Versions())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	const routes = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	waitFor("the first load", func(v map[string]map[string]string) bool { return len(v) == 1 })
	first := srv.Versions()["gateway/edge"][routes]
	body := "kind: gateway/service/v1\nname: late\ngroup: edge\nhosts: [late.example.com]\nlisteners: [public/api]\nupstreams: [{name: u, endpoints: [\"198.51.100.77:80\"]}]\nroutes:\n  - {prefix: /, target: u}\n"
	if err := os.WriteFile(filepath.Join(dir, "late.yaml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("the new service", func(v map[string]map[string]string) bool { return v["gateway/edge"][routes] != first })
	if err := os.Remove(filepath.Join(dir, "late.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor("the service to go", func(v map[string]map[string]string) bool { return v["gateway/edge"][routes] == first })
}
