package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHtpasswdFilesReloads: a rotated file (a Secret updated in place) is
// read again after Recheck; a plain-text or SHA-1 line refuses the file.
func TestHtpasswdFilesReloads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "htpasswd")
	write := func(s string, mod time.Time) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Unix(1000, 0)
	h := &HtpasswdFiles{Recheck: time.Second, Now: func() time.Time { return now }}
	write("a:$2y$04$abcdefghijklmnopqrstuu5Q0M2xLZ3W2Yk4o2nUQ8l8a0Zr1Yh1e\n", now)
	u, err := h.Users(p)
	if err != nil || len(u) != 1 || u["a"] == nil {
		t.Fatalf("users %v, %v", u, err)
	}
	write("a:$2y$04$abcdefghijklmnopqrstuu5Q0M2xLZ3W2Yk4o2nUQ8l8a0Zr1Yh1e\nb:$2b$04$abcdefghijklmnopqrstuu5Q0M2xLZ3W2Yk4o2nUQ8l8a0Zr1Yh1e\n", now.Add(time.Minute))
	if u, _ := h.Users(p); len(u) != 1 {
		t.Fatalf("re-read before Recheck: %v", u)
	}
	now = now.Add(2 * time.Second)
	if u, _ := h.Users(p); len(u) != 2 {
		t.Fatalf("rotated file not read again: %v", u)
	}
	for _, bad := range []string{"a:plaintext\n", "a:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=\n", "a:$apr1$x$y\n", "nocolon\n"} {
		now = now.Add(2 * time.Second)
		write(bad, now)
		_, err := h.Users(p)
		if err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), "plaintext") {
			t.Errorf("error %q repeats the file's secret part", err)
		}
	}
}
