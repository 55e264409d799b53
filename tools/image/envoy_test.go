package main

import (
	"archive/tar"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func testEnvoySpec(t *testing.T) EnvoySpec {
	t.Helper()
	tag, err := name.NewTag("ghcr.io/tlbproject/envoy:v1.40.0", name.StrictValidation)
	if err != nil {
		t.Fatal(err)
	}
	return EnvoySpec{
		Tag:     tag,
		Envoy:   []byte("envoy binary"),
		Release: EnvoyRelease{Version: "1.40.0", Revision: "9e5580933739775e8bce696a57a2e1bc99368f23"},
		Runtime: []File{
			{Path: "/lib64/ld-linux-x86-64.so.2", Mode: 0o755, Data: []byte("ld.so")},
			{Path: "/lib/x86_64-linux-gnu/libc.so.6", Mode: 0o755, Data: []byte("libc")},
			{Path: "/lib/x86_64-linux-gnu/libm.so.6", Mode: 0o644, Data: []byte("libm")},
		},
		Libc:    "2.36-9+deb12u14",
		Created: time.Unix(1764000000, 0),
		Builder: "0123456789abcdef0123456789abcdef01234567",
		Arch:    "amd64",
	}
}

// TestBuildEnvoy writes the Envoy image of fake files and reads it back:
// its config, and a layer in which Envoy alone carries the capability
// record containerd turns into security.capability.
func TestBuildEnvoy(t *testing.T) {
	s := testEnvoySpec(t)
	img, err := BuildEnvoy(s)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "envoy.tar")
	if err := tarball.WriteToFile(p, s.Tag, img); err != nil {
		t.Fatal(err)
	}
	back, err := tarball.ImageFromPath(p, &s.Tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := back.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]string{
		"user":       {cf.Config.User, "101:101"},
		"entrypoint": {strings.Join(cf.Config.Entrypoint, " "), "/usr/local/bin/envoy"},
		"version":    {cf.Config.Labels[LabelVersion], "v1.40.0"},
		"revision":   {cf.Config.Labels[LabelRevision], s.Release.Revision},
		"source":     {cf.Config.Labels[LabelSource], "https://github.com/envoyproxy/envoy"},
		"libc":       {cf.Config.Labels[LabelLibc], "2.36-9+deb12u14"},
		"created":    {cf.Created.UTC().Format(time.RFC3339), "2025-11-24T16:00:00Z"},
		"history":    {cf.History[0].Comment, "revision " + s.Builder},
	}
	for what, c := range checks {
		if c[0] != c[1] {
			t.Errorf("config %s = %q; want %q", what, c[0], c[1])
		}
	}
	layers, err := back.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, _ := io.ReadAll(tr)
		got[h.Name] = fmt.Sprintf("%s %o ", b, h.Mode) + hex.EncodeToString([]byte(h.PAXRecords["SCHILY.xattr.security.capability"]))
	}
	want := map[string]string{
		"usr/local/bin/envoy":            "envoy binary 755 0100000200040000000000000000000000000000",
		"lib64/ld-linux-x86-64.so.2":     "ld.so 755 ",
		"lib/x86_64-linux-gnu/libc.so.6": "libc 755 ",
		"lib/x86_64-linux-gnu/libm.so.6": "libm 644 ",
		"etc/passwd":                     envoyPasswd + " 644 ",
		"etc/group":                      envoyGroup + " 644 ",
	}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("%s = %q; want %q", f, got[f], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("layer files %v; want exactly %v", got, want)
	}
}

// TestBuildEnvoyDeterministic: one spec, one digest; each input changes it.
func TestBuildEnvoyDeterministic(t *testing.T) {
	digest := func(s EnvoySpec) string {
		img, err := BuildEnvoy(s)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	base := digest(testEnvoySpec(t))
	if again := digest(testEnvoySpec(t)); again != base {
		t.Fatalf("two builds of one spec: %s and %s", base, again)
	}
	changes := map[string]func(*EnvoySpec){
		"envoy bytes":   func(s *EnvoySpec) { s.Envoy = []byte("another envoy") },
		"a library":     func(s *EnvoySpec) { s.Runtime[1].Data = []byte("libc 2") },
		"libc version":  func(s *EnvoySpec) { s.Libc = "2.36-9+deb12u15" },
		"creation time": func(s *EnvoySpec) { s.Created = s.Created.Add(time.Second) },
		"builder":       func(s *EnvoySpec) { s.Builder = "fedcba9876543210fedcba9876543210fedcba98" },
	}
	for what, change := range changes {
		t.Run(what, func(t *testing.T) {
			s := testEnvoySpec(t)
			change(&s)
			if d := digest(s); d == base {
				t.Errorf("changing the %s kept digest %s", what, d)
			}
		})
	}
}

func TestBuildEnvoyRejects(t *testing.T) {
	tests := map[string]struct {
		change  func(*EnvoySpec)
		wantErr string
	}{
		"no binary":        {func(s *EnvoySpec) { s.Envoy = nil }, "no Envoy binary"},
		"tag not release":  {func(s *EnvoySpec) { s.Release.Version = "1.39.3" }, "the binary is Envoy 1.39.3; its tag must be v1.39.3"},
		"no revision":      {func(s *EnvoySpec) { s.Release.Revision = "" }, "no Envoy revision"},
		"no time":          {func(s *EnvoySpec) { s.Created = time.Time{} }, "SOURCE_DATE_EPOCH"},
		"no builder":       {func(s *EnvoySpec) { s.Builder = "" }, "no builder revision"},
		"no libc":          {func(s *EnvoySpec) { s.Libc = "" }, "no libc6 version"},
		"relative library": {func(s *EnvoySpec) { s.Runtime[1].Path = "lib/libc.so.6" }, `runtime file "lib/libc.so.6": not an absolute clean path`},
		"empty library":    {func(s *EnvoySpec) { s.Runtime[2].Data = nil }, "runtime file /lib/x86_64-linux-gnu/libm.so.6: empty"},
		"over envoy": {func(s *EnvoySpec) {
			s.Runtime = append(s.Runtime, File{Path: "/usr/local/bin/envoy", Mode: 0o755, Data: []byte("x")})
		}, "runtime file /usr/local/bin/envoy: listed twice or in the way"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := testEnvoySpec(t)
			tc.change(&s)
			_, err := BuildEnvoy(s)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("BuildEnvoy error = %v; want %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseEnvoyVersion(t *testing.T) {
	tests := map[string]struct {
		out     string
		want    EnvoyRelease
		wantErr string
	}{
		"release": {
			out:  "\n/usr/local/bin/envoy  version: 9e5580933739775e8bce696a57a2e1bc99368f23/1.40.0/Clean/RELEASE/BoringSSL\n\n",
			want: EnvoyRelease{Version: "1.40.0", Revision: "9e5580933739775e8bce696a57a2e1bc99368f23"},
		},
		"modified build": {out: "envoy  version: 9e5580933739775e8bce696a57a2e1bc99368f23/1.40.0/Modified/RELEASE/BoringSSL", wantErr: "of a release build"},
		"debug build":    {out: "envoy  version: 9e5580933739775e8bce696a57a2e1bc99368f23/1.40.0/Clean/DEBUG/BoringSSL", wantErr: "of a release build"},
		"not envoy":      {out: "bash: envoy: command not found", wantErr: `printed "bash: envoy: command not found"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseEnvoyVersion(tc.out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseEnvoyVersion = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestEnvoyPasswd: user and group 101 are envoy, as EnvoyUser says.
func TestEnvoyPasswd(t *testing.T) {
	if !bytes.Contains([]byte(envoyPasswd), []byte("\nenvoy:x:101:101:")) || !bytes.Contains([]byte(envoyGroup), []byte("\nenvoy:x:101:\n")) {
		t.Errorf("passwd/group lack envoy 101:\n%s%s", envoyPasswd, envoyGroup)
	}
	if EnvoyUser != "101:101" {
		t.Errorf("EnvoyUser = %q; deploy/envoy runs as 101:101", EnvoyUser)
	}
}
