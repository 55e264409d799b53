package procsys

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestGetSetUnderRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "net/ipv4/vs"), 0o755); err != nil {
		t.Fatal(err)
	}
	key := "net/ipv4/vs/sloppy_tcp"
	if err := os.WriteFile(filepath.Join(root, key), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := ProcSys{Root: root}
	if err := p.Set(key, "1"); err != nil {
		t.Fatal(err)
	}
	if v, err := p.Get(key); err != nil || v != "1" {
		t.Fatalf("Get(%s) = %q, %v; want 1", key, v, err)
	}
	// A key that does not exist is not created.
	if err := p.Set("net/ipv4/vs/nope", "1"); err == nil {
		t.Fatal("Set of a missing key succeeded; want an error")
	}
	if _, err := os.Stat(filepath.Join(root, "net/ipv4/vs/nope")); err == nil {
		t.Fatal("Set created a missing key")
	}
	for _, bad := range []string{"", "/etc/passwd", "net/../../etc/passwd"} {
		if err := p.Set(bad, "1"); err == nil {
			t.Errorf("Set(%q) succeeded; want an error", bad)
		}
	}
}

func TestReadOnlyMountSaysWhatToDo(t *testing.T) {
	err := ProcSys{}.writeErr("net/ipv4/vs/sloppy_tcp", "1", &os.PathError{Op: "open", Path: "/proc/sys/net/ipv4/vs/sloppy_tcp", Err: syscall.EROFS})
	for _, want := range []string{"net/ipv4/vs/sloppy_tcp=1", "read-only", "/proc/sys", "--sysctl-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}
