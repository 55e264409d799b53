package filecap

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestReadRefusesWhatIsNotARegularFile: a FIFO without a writer would
// block a reader forever, /dev/zero never ends; both are refused at once,
// and a symbolic link to a regular file (a mounted ConfigMap) still reads.
func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero", dir} {
		done := make(chan error, 1)
		go func() { _, err := Read(path, 1024); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), path) {
				t.Errorf("Read(%s) err = %v; want a refusal naming the path", path, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("Read(%s) blocked", path)
		}
	}
	real := filepath.Join(dir, "real.yaml")
	if err := os.WriteFile(real, []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if data, err := Read(link, 1024); err != nil || string(data) != "a: 1\n" {
		t.Errorf("Read(symlink) = %q, %v", data, err)
	}
}
