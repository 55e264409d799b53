package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunDir: the shared directory ends with mode 0750 and the owner
// asked for (here the test's own user: only root may give it away); bad
// owners and a file instead of a directory are refused.
func TestRunDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "edge")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := prepareRunDir(dir, os.Getuid(), os.Getgid()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("mode %v, want 0750", fi.Mode().Perm())
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := prepareRunDir(file, os.Getuid(), os.Getgid()); err == nil {
		t.Error("a file was accepted as the directory")
	}
	for _, bad := range []string{"", "101", "101:", "a:b", "-1:101"} {
		if _, _, err := parseOwner(bad); err == nil {
			t.Errorf("--owner %q accepted", bad)
		}
	}
	if u, g, err := parseOwner("101:102"); err != nil || u != 101 || g != 102 {
		t.Errorf("101:102 -> %d %d %v", u, g, err)
	}
}
