package console_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/internal/console"
)

// TestFileModeRoutesOfTheDSL: the real `l7 serve` in file mode (no API
// server) with --routes-token-file lists the routes of its DSL files on
// /routes, and the console, given the same token (--l7-token-file),
// shows them on the VIP with their source; without the token it shows
// why it cannot.
func TestFileModeRoutesOfTheDSL(t *testing.T) {
	bin, err := envoyproc.L7Binary()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(cfg, "edge.yaml"), `kind: gateway/gateway/v1
name: edge
group: edge
listeners:
  - {name: web, vip: 203.0.113.10, port: 80, protocol: HTTP}
`)
	write(filepath.Join(cfg, "shop.yaml"), `kind: gateway/service/v1
name: shop
group: edge
hosts: [shop.example.com]
listeners: [edge/web]
upstreams: [{name: web, endpoints: ["10.0.0.1:8080"]}]
routes:
  - {name: all, prefix: /, target: web}
`)
	token := filepath.Join(dir, "token")
	write(token, "console-reads-routes-0123456789\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command(bin, "serve", "--group=edge", "--config="+cfg, "--cert-dir="+dir, "--xds-addr=unix://"+filepath.Join(dir, "xds.sock"),
		"--metrics-addr="+addr, "--routes-token-file="+token)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("l7 serve log:\n%s", out.String())
		}
	})

	ep := []console.Endpoint{{Role: console.RoleL7, Name: "edge-a", URL: "http://" + addr}}
	var got []console.Component
	deadline := time.Now().Add(time.Minute)
	for {
		got = console.HTTPComponents{Endpoints: ep, L7TokenFile: token}.ReadComponents(context.Background())
		if len(got) == 1 && len(got[0].Routes) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no routes from l7 serve in file mode within a minute: %+v", got)
		}
		time.Sleep(100 * time.Millisecond) // poll period
	}
	r := got[0].Routes
	if len(r) != 1 || r[0].VIP != "203.0.113.10" || r[0].Port != 80 || r[0].Host != "shop.example.com" || r[0].Path != "/" ||
		r[0].Source != "dsl" || len(r[0].Upstreams) != 1 || r[0].Upstreams[0].Name != "web" {
		t.Errorf("routes %+v, want the DSL's one route shop.example.com/ -> web on 203.0.113.10:80", r)
	}

	// The console's view shows it on the VIP, from the DSL.
	col := &console.Collector{Components: console.HTTPComponents{Endpoints: ep, L7TokenFile: token}}
	var b strings.Builder
	if err := console.WriteText(&b, console.BuildView(col.Collect(context.Background()))); err != nil {
		t.Fatal(err)
	}
	if want := "route 80 shop.example.com/ (prefix shop) -> web (10.0.0.1:8080) [dsl, on edge-a]"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}

	// Another token, or none: refused, and the console says why.
	write(filepath.Join(dir, "other"), "not-the-token-of-l7-0123456789\n")
	for name, file := range map[string]string{"another token": filepath.Join(dir, "other"), "no token": ""} {
		got = console.HTTPComponents{Endpoints: ep, L7TokenFile: file}.ReadComponents(context.Background())
		if len(got) != 1 || got[0].Routes != nil || !strings.Contains(got[0].Err, "HTTP 401") || !strings.Contains(got[0].Err, "--routes-token-file") {
			t.Errorf("%s: %+v, want no routes and a 401 naming --routes-token-file", name, got)
		}
	}
}
