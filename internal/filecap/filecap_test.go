package filecap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	tests := map[string]struct {
		size    int
		wantErr bool
	}{
		"empty":        {size: 0},
		"at the cap":   {size: 1024},
		"one over cap": {size: 1025, wantErr: true},
		"far over cap": {size: 1 << 20, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.yaml")
			if err := os.WriteFile(path, make([]byte, tc.size), 0o600); err != nil {
				t.Fatal(err)
			}
			data, err := Read(path, 1024)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Read err = %v; wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				if !IsTooLarge(err) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "1 KiB") {
					t.Errorf("err = %v; want a TooLargeError naming %s and the 1 KiB cap", err, path)
				}
				return
			}
			if len(data) != tc.size {
				t.Errorf("read %d bytes; want %d", len(data), tc.size)
			}
		})
	}
}

func TestReadMissing(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "none"), 10); !os.IsNotExist(err) {
		t.Errorf("err = %v; want not-exist", err)
	}
}

func TestHuman(t *testing.T) {
	for n, want := range map[int64]string{4 << 20: "4 MiB", 512 << 10: "512 KiB", 1000: "1000 bytes", 0: "0 bytes"} {
		if got := Human(n); got != want {
			t.Errorf("Human(%d) = %q; want %q", n, got, want)
		}
	}
}
