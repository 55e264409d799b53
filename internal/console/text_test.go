package console

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// getText serves GET /?format=text over api and comps.
func getText(t *testing.T, api APISource, comps ComponentSource) string {
	t.Helper()
	col := &Collector{API: api, Components: comps, Timeout: 5 * time.Second, Now: func() time.Time { return time.Unix(1700000100, 0) }}
	h, err := NewHandler(col, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?format=text", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q, want text/plain", ct)
	}
	return rec.Body.String()
}

func TestTextSummaryShowsTheSameStateAsThePage(t *testing.T) {
	out := getText(t, fakeAPI{st: testState()}, fakeComponents(testComponents()))
	for _, want := range []string{
		"API server: ok",
		"  203.0.113.10  pool prod-a  cluster tlb-1  services [shop/web] ",
		"    director dir-1: ready, health up, sessions 1/1 up, announcing true",
		"    director dir-2: not ready, health up, sessions 0/1 up, announcing false",
		"bound on [gw-a]",
		"  director dir-2: not ready\n    BGP peer 198.18.1.1: down\n",
		"  director dir-1: ready\n    BGP peer 198.18.1.1: established\n",
		"Gateways: the Gateway API is not installed",
		"BGP session down",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "<") {
		t.Errorf("text summary has markup:\n%s", out)
	}
}

func TestTextSummaryAPIDownKeepsComponents(t *testing.T) {
	comps := testComponents()
	comps[1].Err = "dial tcp 198.18.1.3:9100: connect: connection refused"
	out := getText(t, fakeAPI{err: errAPIDown}, fakeComponents(comps))
	for _, want := range []string{
		"API server unreachable: dial tcp 10.96.0.1:443",
		"  director dir-1: ready\n    BGP peer 198.18.1.1: established\n",
		"  director dir-2: unreachable: dial tcp 198.18.1.3:9100: connect: connection refused",
		"Gateways: unknown (no API server)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text summary lacks %q:\n%s", want, out)
		}
	}
}
