package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstall(t *testing.T) {
	content := []byte("\x7fELF pretend binary")
	tests := map[string]struct {
		existing  []byte // content already at DIR/l7, nil for none
		missing   bool   // DIR does not exist
		wantErr   string
		wantFiles []string
	}{
		"into an empty directory":       {wantFiles: []string{"l7"}},
		"replaces an existing l7":       {existing: []byte("old"), wantFiles: []string{"l7"}},
		"directory that does not exist": {missing: true, wantErr: "create temporary file in"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "self")
			if err := os.WriteFile(src, content, 0o700); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if tc.missing {
				dir = filepath.Join(dir, "nope")
			}
			if tc.existing != nil {
				if err := os.WriteFile(filepath.Join(dir, "l7"), tc.existing, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dst, err := install(src, dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "l7") {
					t.Fatalf("install error = %v; want one naming l7 and containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, "l7"); dst != want {
				t.Errorf("install wrote %s; want %s", dst, want)
			}
			got, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, content) {
				t.Errorf("installed content = %q; want %q", got, content)
			}
			st, err := os.Stat(dst)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o755 {
				t.Errorf("installed mode = %v; want 0755", st.Mode().Perm())
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if strings.Join(names, ",") != strings.Join(tc.wantFiles, ",") {
				t.Errorf("directory holds %v; want %v (no temporary file left)", names, tc.wantFiles)
			}
		})
	}
}

func TestRunInstallArgs(t *testing.T) {
	for name, args := range map[string][]string{
		"no directory":   nil,
		"two arguments":  {"a", "b"},
		"empty argument": {""},
	} {
		t.Run(name, func(t *testing.T) {
			err := runInstall(args)
			if err == nil || !strings.Contains(err.Error(), "install: want exactly one argument") {
				t.Errorf("runInstall(%q) error = %v; want the argument error", args, err)
			}
		})
	}
}

// TestRunInstallCopiesRunningExecutable: "l7 install DIR" copies the running
// executable (here the test binary) byte for byte.
func TestRunInstallCopiesRunningExecutable(t *testing.T) {
	dir := t.TempDir()
	if err := runInstall([]string{dir}); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "l7"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("installed %d bytes; want the %d bytes of the running executable", len(got), len(want))
	}
}
