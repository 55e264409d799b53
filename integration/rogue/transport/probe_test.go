package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// probeEnv carries the probe's targets (JSON) to the test binary run as
// another user; its answer is JSON on stdout.
const probeEnv = "TLB_ROGUE_PROBE"

// nobody is the local user of the node the probe runs as.
const nobody = 65534

// TestMain runs the probe when the test binary is started as one.
func TestMain(m *testing.M) {
	if targets := os.Getenv(probeEnv); targets != "" {
		var l listening
		if err := json.Unmarshal([]byte(targets), &l); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		_ = json.NewEncoder(os.Stdout).Encode(probe(l))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probeResult is what the probe got from one socket.
type probeResult struct {
	Target  string
	DialErr string
	// HTTP maps "METHOD /path" to the status and the body's start.
	HTTP map[string]httpAnswer
	// ADS maps "kind/group type" to the answer of an ADS request.
	ADS map[string]adsAnswer
	// Authz is the answer of an ext_authz Check, or its error.
	Authz string
}

type httpAnswer struct {
	Status int
	Body   string
	Err    string
}

// The requests a local user tries on every socket: the Envoy admin API's
// reading and mutating endpoints, l7's obs endpoints.
var probeHTTP = []string{
	"GET /routes", "GET /config_dump", "GET /config_dump?include_eds", "GET /clusters", "GET /certs", "GET /listeners",
	"GET /stats", "GET /stats/prometheus", "GET /metrics", "GET /ready", "GET /readyz", "GET /server_info",
	"POST /quitquitquit", "POST /healthcheck/fail", "POST /drain_listeners", "POST /runtime_modify?tlb=1",
	"POST /logging?level=trace", "POST /reset_counters",
}

// probe tries every target as the user it runs as.
func probe(l listening) []probeResult {
	var out []probeResult
	for _, addr := range l.TCP {
		out = append(out, probeOne(addr, "tcp", addr))
	}
	for _, path := range l.Unix {
		out = append(out, probeOne(path, "unix", path))
	}
	return out
}

func probeOne(target, network, addr string) probeResult {
	r := probeResult{Target: network + ":" + target, HTTP: map[string]httpAnswer{}, ADS: map[string]adsAnswer{}}
	c, err := net.DialTimeout(network, addr, 5*time.Second)
	if err != nil {
		r.DialErr = err.Error()
		return r
	}
	_ = c.Close()
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: dial}}
	for _, q := range probeHTTP {
		method, path, _ := strings.Cut(q, " ")
		req, _ := http.NewRequest(method, "http://gateway"+path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			r.HTTP[q] = httpAnswer{Err: err.Error()}
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		r.HTTP[q] = httpAnswer{Status: resp.StatusCode, Body: string(b)}
	}
	cc, err := grpc.NewClient("passthrough:///"+target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx, "", "") }))
	if err != nil {
		r.Authz = err.Error()
		return r
	}
	defer func() { _ = cc.Close() }()
	for _, kg := range []string{"gateway/" + alpha, "grpc/" + alpha} {
		kind, group, _ := strings.Cut(kg, "/")
		for _, typ := range []string{resource.SecretType, resource.ListenerType} {
			r.ADS[kg+" "+typ] = askADS(cc, kind, group, typ, 5*time.Second)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := authv3.NewAuthorizationClient(cc).Check(ctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		ContextExtensions: map[string]string{"tlb.interceptors": `[{"type":"external","id":"x","transport":"rest","url":"http://127.0.25.99:1/"}]`},
		Request:           &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{Method: "POST", Path: "/", Host: "alpha.example.com"}},
	}})
	if err != nil {
		r.Authz = "error: " + err.Error()
	} else {
		r.Authz = "answered: " + resp.String()
	}
	return r
}

// probeAs runs the probe over l as uid (and the same gid, no other
// group), from a copy of this test binary any user can run.
func probeAs(t *testing.T, uid int, l listening) []probeResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "probe")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "probe")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	targets, _ := json.Marshal(l)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), probeEnv+"="+string(targets))
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}, Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the probe as uid %d: %v\n%s", uid, err, stderr.String())
	}
	var res []probeResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("the probe's answer: %v\n%s", err, out)
	}
	if len(res) != len(l.TCP)+len(l.Unix) {
		t.Fatalf("the probe tried %d of %d sockets", len(res), len(l.TCP)+len(l.Unix))
	}
	return res
}
