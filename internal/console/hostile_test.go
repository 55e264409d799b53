package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHostileComponentIsCapped: a component that answers /readyz with an
// endless body, or a long reason, costs the console a few KiB: the endless
// one is an error for that component only, the long reason is cut for the
// page, and neither is kept whole.
func TestHostileComponentIsCapped(t *testing.T) {
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		chunk := []byte(strings.Repeat("x", 64<<10))
		for i := 0; i < 512; i++ { // 32 MiB unless the reader stops
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer endless.Close()
	long := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(strings.Repeat("é", 1000)))
	}))
	defer long.Close()
	got := HTTPComponents{Endpoints: []Endpoint{
		{Role: RoleNetd, Name: "endless", URL: endless.URL},
		{Role: RoleNetd, Name: "long", URL: long.URL},
	}}.ReadComponents(context.Background())
	if !strings.Contains(got[0].Err, "/readyz") || !strings.Contains(got[0].Err, "over") || got[0].ReadyReason != "" {
		t.Errorf("endless: err %q reason %d bytes; want an error naming /readyz and its cap, nothing kept", got[0].Err, len(got[0].ReadyReason))
	}
	if r := got[1].ReadyReason; len(r) > maxReason+len("…") || !strings.HasPrefix(r, "éé") || !strings.HasSuffix(r, "…") {
		t.Errorf("long: reason of %d bytes %q; want at most %d, cut on a rune", len(r), r[:min(len(r), 20)], maxReason)
	}
}
