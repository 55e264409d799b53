// Package tokenfile admits HTTP requests whose bearer token is the
// content of a file: the guard of a read-only listing served without an
// API server to ask (l7's GET /routes in file mode, read by the
// console's --l7-token-file). The file is read on every request, so a
// rotated token takes effect at once, and the comparison takes constant
// time. It keeps no package-level state and never logs a token.
package tokenfile

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
)

// minTokenBytes is the shortest token the guard accepts from its file: a
// short one could be guessed.
const minTokenBytes = 16

// Guard admits requests that present the token of File as
// "Authorization: Bearer TOKEN".
type Guard struct {
	// File holds the token (surrounding white space is ignored).
	File string
	// Log receives the failures to read File.
	Log *slog.Logger
}

// Token reads and checks the token of file: at least 16 bytes after
// trimming white space.
func Token(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read the token file: %w", err)
	}
	tok := bytes.TrimSpace(b)
	if len(tok) < minTokenBytes {
		return nil, fmt.Errorf("token file %s: %d bytes of token, want at least %d", file, len(tok), minTokenBytes)
	}
	return tok, nil
}

// Wrap returns h behind the guard: 401 without the token or with
// another, 503 when the file cannot be read (nobody is admitted).
func (g Guard) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want, err := Token(g.File)
		if err != nil {
			g.Log.Warn("cannot check a caller's token", "path", r.URL.Path, "err", err)
			http.Error(w, "the token file cannot be read", http.StatusServiceUnavailable)
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || got == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tlb"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tlb", error="invalid_token"`)
			http.Error(w, "the token is not the one of the token file", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
