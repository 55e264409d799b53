package tokenfile

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestGuard: only the file's token passes; a rotated file takes effect
// at once; an unreadable or too short token file admits nobody.
func TestGuard(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("0123456789abcdef0123\n")
	h := Guard{File: file, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}.Wrap(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("routes")) }))
	get := func(auth string) int {
		r := httptest.NewRequest(http.MethodGet, "/routes", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"the file's token", "Bearer 0123456789abcdef0123", http.StatusOK},
		{"no token", "", http.StatusUnauthorized},
		{"another token", "Bearer 0123456789abcdef0124", http.StatusUnauthorized},
		{"a prefix of it", "Bearer 0123456789abcdef", http.StatusUnauthorized},
		{"not a bearer", "Basic 0123456789abcdef0123", http.StatusUnauthorized},
	} {
		if got := get(tc.auth); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	write("fedcba9876543210fedc")
	if got := get("Bearer 0123456789abcdef0123"); got != http.StatusUnauthorized {
		t.Errorf("the old token after a rotation: %d, want 401", got)
	}
	if got := get("Bearer fedcba9876543210fedc"); got != http.StatusOK {
		t.Errorf("the new token after a rotation: %d, want 200", got)
	}
	write("short")
	if got := get("Bearer short"); got != http.StatusServiceUnavailable {
		t.Errorf("a too short token file: %d, want 503", got)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if got := get("Bearer fedcba9876543210fedc"); got != http.StatusServiceUnavailable {
		t.Errorf("no token file: %d, want 503", got)
	}
}
