package dsl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const stampSvc = "kind: gateway/service/v1\nname: NAME\ngroup: edge\nupstreams: [{name: u, endpoints: [\"198.51.100.1:80\"]}]\nroutes: [{prefix: /, target: u}]\n"

// TestSettledFilesNotReadAgain: a reload reads only the files that
// changed since they were last read, yet sees every change: a settled
// file is skipped; the same file rewritten in place with other content of
// the same size is read again (its change time moved), and so is one
// renamed over it; a file modified within settleTime of its read is read
// on every load, since the kernel's coarse clock could hide a second
// write.
func TestSettledFilesNotReadAgain(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(name, svc string, settled bool) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Replace(stampSvc, "NAME", svc, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if settled {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	services := func(d *Dir) []string {
		t.Helper()
		cfg, errs, err := d.Load()
		if err != nil || len(errs) > 0 {
			t.Fatalf("load: %v %v", err, errs)
		}
		var out []string
		for _, s := range cfg.Services {
			out = append(out, s.Name)
		}
		return out
	}
	write("a.yaml", "aaa", true)
	write("b.yaml", "bbb", true)
	write("c.yaml", "ccc", false) // just written: not settled
	d := NewDir(dir, time.Now)
	if got := services(d); strings.Join(got, ",") != "aaa,bbb,ccc" || d.reads != 3 {
		t.Fatalf("first load: %v, %d files read", got, d.reads)
	}

	d.reads = 0
	if got := services(d); strings.Join(got, ",") != "aaa,bbb,ccc" || d.reads != 1 {
		t.Fatalf("second load: %v, %d files read; want only the unsettled c.yaml read again", got, d.reads)
	}

	// a.yaml rewritten in place, same size, its times set back: its change
	// time still moved.
	write("a.yaml", "xxx", true)
	// b.yaml replaced by a settled file renamed over it.
	tmp := filepath.Join(t.TempDir(), "b.yaml")
	if err := os.WriteFile(tmp, []byte(strings.Replace(stampSvc, "NAME", "yyy", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "b.yaml")); err != nil {
		t.Fatal(err)
	}
	d.reads = 0
	if got := services(d); strings.Join(got, ",") != "xxx,yyy,ccc" || d.reads != 3 {
		t.Fatalf("after the changes: %v, %d files read; want a, b and c read", got, d.reads)
	}
}
