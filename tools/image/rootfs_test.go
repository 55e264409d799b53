package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestRootFS(t *testing.T) {
	elf := []byte("\x7fELF")
	tests := map[string]struct {
		bins    []Binary
		want    []string // "path mode" in order; dirs end in /
		wantErr string
	}{
		"four binaries": {
			bins: []Binary{{"tlb", elf}, {"netd", elf}, {"l7", elf}, {"ipam", elf}},
			want: []string{
				"/etc/ 755", "/etc/group 644", "/etc/passwd 644",
				"/usr/ 755", "/usr/local/ 755", "/usr/local/bin/ 755",
				"/usr/local/bin/ipam 755", "/usr/local/bin/l7 755",
				"/usr/local/bin/netd 755", "/usr/local/bin/tlb 755",
			},
		},
		"empty name":       {bins: []Binary{{"", elf}}, wantErr: `binary 0: name "" is not a plain file name`},
		"name with a path": {bins: []Binary{{"../etc/shadow", elf}}, wantErr: "is not a plain file name"},
		"dot dot":          {bins: []Binary{{"..", elf}}, wantErr: "is not a plain file name"},
		"listed twice":     {bins: []Binary{{"tlb", elf}, {"tlb", elf}}, wantErr: "binary tlb: listed twice"},
		"empty file":       {bins: []Binary{{"tlb", nil}}, wantErr: "binary tlb: empty file"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := rootFS(tc.bins)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("rootFS error = %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, e := range got {
				p := e.path
				if e.dir {
					p += "/"
				}
				lines = append(lines, fmt.Sprintf("%s %o", p, e.mode))
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("rootFS =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestLayerTar(t *testing.T) {
	entries, err := rootFS([]Binary{{"tlb", []byte("tlb binary")}, {"l7", []byte("l7 binary")}})
	if err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1764000000, 0)
	raw, err := layerTar(entries, mtime)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(h.Name, "/") {
			t.Errorf("%s: absolute name in a layer", h.Name)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "root" || h.Gname != "root" {
			t.Errorf("%s: owner %d:%d (%s:%s); want root 0:0", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		if !h.ModTime.Equal(mtime) {
			t.Errorf("%s: mtime %v; want %v", h.Name, h.ModTime, mtime)
		}
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			files[h.Name] = fmt.Sprintf("%o %s", h.Mode, b)
		}
	}
	want := map[string]string{
		"usr/local/bin/tlb": "755 tlb binary",
		"usr/local/bin/l7":  "755 l7 binary",
		"etc/passwd":        "644 " + passwd,
		"etc/group":         "644 " + group,
	}
	for p, w := range want {
		if files[p] != w {
			t.Errorf("%s = %q; want %q", p, files[p], w)
		}
	}
	if len(files) != len(want) {
		t.Errorf("layer has files %v; want exactly %v", files, want)
	}

	again, err := layerTar(entries, mtime)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, again) {
		t.Error("two layers of the same entries and mtime differ")
	}
	later, err := layerTar(entries, mtime.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(raw, later) {
		t.Error("a different mtime gave the same layer bytes; mtimes are not being written")
	}
}

// TestPasswd: both files parse as the C library reads them, and the image's
// default user is the nonroot entry they declare.
func TestPasswd(t *testing.T) {
	users := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(passwd, "\n"), "\n") {
		f := strings.Split(line, ":")
		if len(f) != 7 {
			t.Fatalf("passwd line %q has %d fields; want 7", line, len(f))
		}
		users[f[0]] = f[2] + ":" + f[3]
	}
	groups := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(group, "\n"), "\n") {
		f := strings.Split(line, ":")
		if len(f) != 4 {
			t.Fatalf("group line %q has %d fields; want 4", line, len(f))
		}
		groups[f[0]] = f[2]
	}
	if users["root"] != "0:0" || groups["root"] != "0" {
		t.Errorf("root = %q group %q; want 0:0 and 0", users["root"], groups["root"])
	}
	if users["nonroot"] != NonRootUser {
		t.Errorf("nonroot = %q; want the image user %q", users["nonroot"], NonRootUser)
	}
	if groups["nonroot"] != "65532" {
		t.Errorf("group nonroot = %q; want 65532", groups["nonroot"])
	}
}
