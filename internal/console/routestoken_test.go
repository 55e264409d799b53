package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestL7RoutesWithToken (issue 22): l7 lists its routes only to an
// authenticated caller, so the console sends its token (re-read from the
// file on every page) with /routes, and only there: /readyz and /metrics
// of every component get no Authorization header. A refusal says why.
func TestL7RoutesWithToken(t *testing.T) {
	var mu sync.Mutex
	leaked := map[string]bool{}
	mux := http.NewServeMux()
	for _, p := range []string{"/readyz", "/metrics"} {
		mux.HandleFunc(p, func(_ http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "" {
				mu.Lock()
				leaked[p] = true
				mu.Unlock()
			}
		})
	}
	mux.HandleFunc("/routes", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer token-2" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"group":"edge","routes":[{"host":"a.example.com","path":"/"}]}`))
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	file := filepath.Join(t.TempDir(), "token")
	eps := []Endpoint{{Role: RoleL7, Name: "edge-a", URL: hs.URL}, {Role: RoleDirector, Name: "d", URL: hs.URL}}

	for _, tc := range []struct {
		token, wantErr string
		routes         int
	}{
		{"token-1\n", "HTTP 401", 0}, // a stale token: refused, and the page says why
		{"token-2\n", "", 1},         // the rotated token, read again
	} {
		if err := os.WriteFile(file, []byte(tc.token), 0o600); err != nil {
			t.Fatal(err)
		}
		got := HTTPComponents{Endpoints: eps, L7TokenFile: file}.ReadComponents(context.Background())
		if len(got[0].Routes) != tc.routes || (tc.wantErr == "") != (got[0].Err == "") || !strings.Contains(got[0].Err, tc.wantErr) {
			t.Errorf("token %q: routes %d err %q; want %d routes, err %q", tc.token, len(got[0].Routes), got[0].Err, tc.routes, tc.wantErr)
		}
	}
	got := HTTPComponents{Endpoints: eps}.ReadComponents(context.Background())
	if !strings.Contains(got[0].Err, "RBAC") {
		t.Errorf("without a token: err %q, want the reason", got[0].Err)
	}
	if len(leaked) > 0 {
		t.Errorf("the token went to %v", leaked)
	}
}
