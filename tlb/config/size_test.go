package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oversized is a valid config padded with comments past MaxFileSize: if
// it were parsed it would be accepted, so a rejection proves the cap.
func oversized() string {
	var b strings.Builder
	b.WriteString(oneService)
	line := "# " + strings.Repeat("x", 1021) + "\n"
	for b.Len() <= MaxFileSize {
		b.WriteString(line)
	}
	return b.String()
}

func TestSizeCap(t *testing.T) {
	big := oversized()
	dir := t.TempDir()
	path := filepath.Join(dir, "tlb.yaml")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]func() error{
		"Load":          func() error { _, err := Load(path); return err },
		"LoadSettings":  func() error { _, err := LoadSettings(path); return err },
		"Parse":         func() error { _, err := Parse(path, []byte(big)); return err },
		"ParseSettings": func() error { _, err := ParseSettings(path, []byte(big)); return err },
	}
	for name, call := range tests {
		t.Run(name, func(t *testing.T) {
			err := call()
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "4 MiB size cap") {
				t.Errorf("err = %v; want an error naming %s and the 4 MiB cap", err, path)
			}
		})
	}
}

func TestSizeCapAllowsFileAtTheCap(t *testing.T) {
	data := oneService + "#" + strings.Repeat("x", MaxFileSize-len(oneService)-2) + "\n"
	if len(data) != MaxFileSize {
		t.Fatalf("test data is %d bytes; want %d", len(data), MaxFileSize)
	}
	if _, err := Parse("tlb.yaml", []byte(data)); err != nil {
		t.Errorf("a file of exactly MaxFileSize bytes rejected: %v", err)
	}
}

// TestWatcherKeepsConfigOverSizeCap: an oversized file is rejected and the
// last good config stays in force.
func TestWatcherKeepsConfigOverSizeCap(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tlb.yaml")
	if err := os.WriteFile(path, []byte(twoService), 0o644); err != nil {
		t.Fatal(err)
	}
	initial, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	applied := make(chan int, 10)
	rejected := make(chan error, 10)
	resync := make(chan time.Time)
	w := &Watcher{Path: path, Debounce: 20 * time.Millisecond, OnReject: func(err error) { rejected <- err }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- w.Run(ctx, initial, resync, func(_ context.Context, c *Config) { applied <- len(c.Desired.Services) })
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	next := func() int {
		t.Helper()
		select {
		case n := <-applied:
			return n
		case <-time.After(5 * time.Second):
			t.Fatal("nothing applied")
			return 0
		}
	}
	if n := next(); n != 2 {
		t.Fatalf("initial: applied %d services; want 2", n)
	}
	tmp := filepath.Join(dir, ".tlb.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(oversized()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-rejected:
		if !strings.Contains(err.Error(), "size cap") {
			t.Errorf("rejection %q does not name the cap", err)
		}
	case n := <-applied:
		t.Fatalf("oversized file applied (%d services)", n)
	case <-time.After(5 * time.Second):
		t.Fatal("oversized file not rejected")
	}
	resync <- time.Now()
	if n := next(); n != 2 {
		t.Errorf("after the rejection the resync applied %d services; want the last good 2", n)
	}
}
