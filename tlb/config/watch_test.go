package config

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	oneService = "services:\n- {vip: 203.0.113.10, port: 80, realServers: [{address: 198.18.2.2}]}\n"
	twoService = "services:\n- {vip: 203.0.113.10, port: 80, realServers: [{address: 198.18.2.2}]}\n- {vip: 203.0.113.11, port: 80, realServers: []}\n"
	invalid    = "services:\n- {vip: 203.0.113.10, port: 80, realServers: [{address: 198.18.2.2, weight: 70000}]}\n"
)

func TestWatcher(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tlb.yaml")
	write := func(content string) {
		t.Helper()
		// Write a new file and rename it over the old one, as editors and
		// config management do.
		tmp := filepath.Join(dir, ".tlb.yaml.tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(oneService)
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

	expectApplied := func(step string, want int) {
		t.Helper()
		select {
		case n := <-applied:
			if n != want {
				t.Fatalf("%s: applied %d services; want %d", step, n, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: nothing applied", step)
		}
	}
	expectApplied("initial", 1)

	write(twoService)
	expectApplied("valid change", 2)

	write(invalid)
	select {
	case err := <-rejected:
		if !strings.Contains(err.Error(), "services[0].realServers[0].weight") {
			t.Errorf("rejection %q does not name the field", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("invalid file not rejected")
	}
	select {
	case n := <-applied:
		t.Fatalf("invalid file applied (%d services)", n)
	case <-time.After(100 * time.Millisecond):
	}

	resync <- time.Now()
	expectApplied("resync keeps the last valid file", 2)

	write(oneService)
	expectApplied("fixed file", 1)

	// Touching the file without changing it applies nothing.
	if err := os.Chtimes(path, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-applied:
		t.Fatalf("unchanged file applied again (%d services)", n)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestWatcherSeesChangeBeforeItStarted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tlb.yaml")
	if err := os.WriteFile(path, []byte(oneService), 0o644); err != nil {
		t.Fatal(err)
	}
	initial, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(twoService), 0o644); err != nil { // before Run watches
		t.Fatal(err)
	}
	applied := make(chan int, 10)
	w := &Watcher{Path: path, Debounce: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = w.Run(ctx, initial, nil, func(_ context.Context, c *Config) { applied <- len(c.Desired.Services) })
	}()
	for i, want := range []int{1, 2} {
		select {
		case n := <-applied:
			if n != want {
				t.Fatalf("apply %d: %d services; want %d", i, n, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("apply %d: nothing applied", i)
		}
	}
}

// TestWatcherKeepsOverrides: a command-line override (--router-id) holds
// for every later version of the file and is not reported as a change of
// the file's BGP settings; a real change of them still is.
func TestWatcherKeepsOverrides(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tlb.yaml")
	file := func(routerID, services string) string {
		return "director: {vipRanges: [203.0.113.0/24]}\nbgp: {localASN: 64512, routerID: " + routerID +
			", allowedPrefixes: [203.0.113.0/24], peers: [{address: 198.18.1.1, asn: 64500}]}\n" + services
	}
	if err := os.WriteFile(path, []byte(file("192.0.2.1", oneService)), 0o644); err != nil {
		t.Fatal(err)
	}
	initial, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	initial.Override(Overrides{RouterID: "198.18.1.2"})

	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	applied := make(chan *Config, 10)
	w := &Watcher{Path: path, Log: log, Debounce: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = w.Run(ctx, initial, nil, func(_ context.Context, c *Config) { applied <- c }) }()
	next := func(step string) *Config {
		t.Helper()
		select {
		case c := <-applied:
			return c
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: nothing applied", step)
			return nil
		}
	}
	if c := next("initial"); c.BGP.RouterID != "198.18.1.2" {
		t.Fatalf("initial router ID %s", c.BGP.RouterID)
	}
	settingsChanged := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(logs.String(), "settings changed")
	}

	if err := os.WriteFile(path, []byte(file("192.0.2.1", twoService)), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := next("services changed"); c.BGP.RouterID != "198.18.1.2" || len(c.Desired.Services) != 2 {
		t.Errorf("after a services change: router ID %s, %d services; want the override and 2", c.BGP.RouterID, len(c.Desired.Services))
	}
	if settingsChanged() {
		t.Errorf("the override was reported as a settings change:\n%s", logs.String())
	}

	if err := os.WriteFile(path, []byte(file("192.0.2.1", oneService)+"health: {kind: tcp, port: 8081}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next("health added")
	if !settingsChanged() {
		t.Errorf("adding a health section was not reported as needing a restart:\n%s", logs.String())
	}
}

// lockedWriter serialises writes to a strings.Builder shared with the test.
type lockedWriter struct {
	w  *strings.Builder
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
