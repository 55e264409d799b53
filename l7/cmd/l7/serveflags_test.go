package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/routetable"
	"github.com/tlbproject/tlb/l7/tlscert"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestServeFlags: --group and --config are required, --keyless takes
// neither --authz-listen nor --grpc-clients, and --grpc-clients adds the
// proxyless clients' kind.
func TestServeFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--config d": "--group and --config are required",
		"--group g":  "--group and --config are required",
		"--group g --config d --keyless --grpc-clients":                    "--keyless serves no gateway",
		"--group g --config d --keyless --authz-listen unix:///run/a.sock": "--keyless serves no gateway",
	} {
		if _, err := parseServeFlags(strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	f, err := parseServeFlags(strings.Fields("--group g --config d --grpc-clients --ratelimit-address ratelimit:8081"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.kinds(); !reflect.DeepEqual(got, []translate.Kind{translate.Gateway, translate.GRPC}) {
		t.Errorf("kinds %v", got)
	}
	opts, err := f.resolveOptions()
	if err != nil || opts.RateLimitService == nil || opts.RateLimitService.Port != 8081 {
		t.Errorf("resolve options %+v, %v", opts, err)
	}
}

// TestRoutesTokenFlag: --routes-token-file is for file mode only; a
// token file too short to be a secret is refused at start; with a good
// one /routes answers only its token.
func TestRoutesTokenFlag(t *testing.T) {
	if _, err := parseServeFlags(strings.Fields("--group g --config d --routes-token-file /t --kubeconfig /k")); err == nil ||
		!strings.Contains(err.Error(), "--routes-token-file is for file mode") {
		t.Errorf("with the API server: %v, want it refused", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	if err := routesForToken(file, nil, mux, routetable.New("g"), log); err == nil || !strings.Contains(err.Error(), "--routes-token-file") {
		t.Errorf("a 5-byte token: %v, want refused naming the flag", err)
	}
	if err := os.WriteFile(file, []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := routesForToken(file, nil, mux, routetable.New("g"), log); err != nil {
		t.Fatal(err)
	}
	for auth, want := range map[string]int{"": http.StatusUnauthorized, "Bearer 0123456789abcdef0123": http.StatusOK} {
		r := httptest.NewRequest(http.MethodGet, "/routes", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("GET /routes with %q: %d, want %d", auth, w.Code, want)
		}
	}
	keyless := http.NewServeMux()
	if err := routesForToken(file, &tlscert.StandIn{}, keyless, routetable.New("g"), log); err != nil {
		t.Fatal(err)
	}
	if _, pattern := keyless.Handler(httptest.NewRequest(http.MethodGet, "/routes", nil)); pattern != "" {
		t.Errorf("a keyless l7 serves /routes (%q)", pattern)
	}
}
