package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRuntimeFiles resolves the loader and libraries of a real dynamically
// linked program of the build machine (Debian's dash, /bin/sh), and fails
// with the library's name when a tree lacks one.
func TestRuntimeFiles(t *testing.T) {
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	dirs := strings.Split(defaultLibDirs, ",")
	got, err := runtimeFiles("/", sh, dirs)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got {
		paths = append(paths, f.Path)
		if len(f.Data) == 0 || f.Mode&0o444 != 0o444 {
			t.Errorf("%s: %d bytes, mode %o; want its content, readable", f.Path, len(f.Data), f.Mode)
		}
	}
	// The loader at the path dash names, libc where the loader finds it;
	// libc's own need of the loader is the loader already there.
	want := "/lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2"
	if strings.Join(paths, " ") != want {
		t.Errorf("runtimeFiles(%s) = %v; want %s", sh, paths, want)
	}
	loader, err := os.ReadFile("/lib64/ld-linux-x86-64.so.2")
	if err != nil {
		t.Fatal(err)
	}
	if string(got[1].Data) != string(loader) {
		t.Error("the loader's content is not that of /lib64/ld-linux-x86-64.so.2 (its link followed)")
	}

	// A tree holding dash and the loader but no libc.
	root := t.TempDir()
	for _, f := range []string{sh, "/lib64/ld-linux-x86-64.so.2"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err = runtimeFiles(root, sh, dirs)
	if err == nil || !strings.Contains(err.Error(), "shared library libc.so.6: in none of") {
		t.Errorf("runtimeFiles without libc = %v; want it to name libc.so.6", err)
	}

}
