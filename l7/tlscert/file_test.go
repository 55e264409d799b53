package tlscert_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/tlscert"
)

func TestReadFile(t *testing.T) {
	allowed, outside := t.TempDir(), t.TempDir()
	write := func(dir, name string, size int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write(allowed, "tls.crt", 10)
	if err := os.MkdirAll(filepath.Join(allowed, "..data"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A Secret volume: tls.key -> ..data/tls.key.
	write(filepath.Join(allowed, "..data"), "tls.key", 10)
	if err := os.Symlink("..data/tls.key", filepath.Join(allowed, "tls.key")); err != nil {
		t.Fatal(err)
	}
	away := write(outside, "away.crt", 10)
	if err := os.Symlink(away, filepath.Join(allowed, "link-out.crt")); err != nil {
		t.Fatal(err)
	}
	big := write(allowed, "big.crt", tlscert.MaxFileSize+1)
	fifo := filepath.Join(allowed, "fifo.crt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		path string
		want string // "" means read
	}{
		"regular file inside":          {ok, ""},
		"symlink inside, Secret style": {filepath.Join(allowed, "tls.key"), ""},
		"file outside":                 {away, "outside the directories"},
		"symlink pointing outside":     {filepath.Join(allowed, "link-out.crt"), "outside the directories"},
		"dot-dot escape":               {filepath.Join(allowed, "..", filepath.Base(outside), "away.crt"), "outside the directories"},
		"too large":                    {big, "larger than"},
		"named pipe":                   {fifo, "not a regular file"},
		"directory":                    {filepath.Join(allowed, "..data"), "not a regular file"},
		"missing":                      {filepath.Join(allowed, "nope.crt"), "no such file"},
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := tlscert.ReadFile(tc.path, []string{allowed}); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("ReadFile hung")
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
}
