package kernel

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProcSys(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "net/ipv4/conf/all")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "arp_ignore"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := ProcSys{Root: root}
	if v, err := p.Get("net/ipv4/conf/all/arp_ignore"); err != nil || v != "0" {
		t.Fatalf("Get = %q, %v; want 0", v, err)
	}
	if err := p.Set("net/ipv4/conf/all/arp_ignore", "1"); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Get("net/ipv4/conf/all/arp_ignore"); v != "1" {
		t.Fatalf("after Set, Get = %q, want 1", v)
	}
	if err := p.Set("net/ipv4/conf/all/missing", "1"); err == nil {
		t.Fatalf("Set created a key that did not exist")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("Set left a file behind: %v", err)
	}
	for _, bad := range []string{"../etc/passwd", "/etc/passwd", ""} {
		if _, err := p.Get(bad); err == nil {
			t.Errorf("Get(%q) succeeded, want it refused", bad)
		}
	}
}
