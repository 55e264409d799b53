package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

func testSpec(t *testing.T) Spec {
	t.Helper()
	tag, err := name.NewTag("ghcr.io/tlbproject/tlb:v0.1.0", name.StrictValidation)
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Tag:      tag,
		Binaries: []Binary{{"tlb", []byte("tlb")}, {"l7", []byte("l7")}},
		Created:  time.Unix(1764000000, 0),
		Source:   "https://github.com/tlbproject/tlb",
		Revision: "0123456789abcdef0123456789abcdef01234567",
		Arch:     "amd64",
	}
}

func digestOf(t *testing.T, s Spec) v1.Hash {
	t.Helper()
	img, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestBuildWritesLoadableArchive writes an image of fake binaries as a
// docker archive and reads it back as docker load would: by its tag, with
// valid digests, the config the manifests rely on and one layer.
func TestBuildWritesLoadableArchive(t *testing.T) {
	s := testSpec(t)
	img, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "img.tar")
	if err := tarball.WriteToFile(path, s.Tag, img); err != nil {
		t.Fatal(err)
	}
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || len(m[0].RepoTags) != 1 || m[0].RepoTags[0] != s.Tag.String() {
		t.Fatalf("manifest.json = %+v; want one image tagged %s", m, s.Tag)
	}
	back, err := tarball.ImageFromPath(path, &s.Tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(back); err != nil {
		t.Fatalf("image read back fails validation: %v", err)
	}
	want, _ := img.Digest()
	if got, _ := back.Digest(); got != want {
		t.Errorf("digest read back = %s; want %s", got, want)
	}
	cf, err := back.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]string{
		"user":       {cf.Config.User, "65532:65532"},
		"entrypoint": {strings.Join(cf.Config.Entrypoint, " "), "/usr/local/bin/tlb"},
		"env":        {strings.Join(cf.Config.Env, " "), "PATH=/usr/local/bin"},
		"os/arch":    {cf.OS + "/" + cf.Architecture, "linux/amd64"},
		"created":    {cf.Created.UTC().Format(time.RFC3339), "2025-11-24T16:00:00Z"},
		"source":     {cf.Config.Labels[LabelSource], "https://github.com/tlbproject/tlb"},
		"version":    {cf.Config.Labels[LabelVersion], "v0.1.0"},
		"revision":   {cf.Config.Labels[LabelRevision], s.Revision},
	}
	for what, c := range checks {
		if c[0] != c[1] {
			t.Errorf("config %s = %q; want %q", what, c[0], c[1])
		}
	}
	layers, err := back.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("image has %d layers; want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	found := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		found[h.Name] = string(b)
	}
	if found["usr/local/bin/tlb"] != "tlb" || found["usr/local/bin/l7"] != "l7" || found["etc/passwd"] != passwd {
		t.Errorf("layer files = %v; want the binaries and passwd", found)
	}
}

// TestBuildDeterministic: equal specs give one digest whatever the clock
// says; changing what goes in changes it.
func TestBuildDeterministic(t *testing.T) {
	base := digestOf(t, testSpec(t))
	time.Sleep(1100 * time.Millisecond) // a build that read the clock would differ now
	if again := digestOf(t, testSpec(t)); again != base {
		t.Fatalf("two builds of one spec: %s and %s", base, again)
	}
	changes := map[string]func(*Spec){
		"revision":      func(s *Spec) { s.Revision = "fedcba9876543210fedcba9876543210fedcba98" },
		"creation time": func(s *Spec) { s.Created = s.Created.Add(time.Second) },
		"binary bytes":  func(s *Spec) { s.Binaries[1].Data = []byte("l7 v2") },
		"tag version":   func(s *Spec) { s.Tag, _ = name.NewTag("ghcr.io/tlbproject/tlb:v0.2.0") },
	}
	for what, change := range changes {
		t.Run(what, func(t *testing.T) {
			s := testSpec(t)
			change(&s)
			if d := digestOf(t, s); d == base {
				t.Errorf("changing the %s kept digest %s", what, d)
			}
		})
	}
}

func TestBuildRejects(t *testing.T) {
	tests := map[string]struct {
		change  func(*Spec)
		wantErr string
	}{
		"no binaries":  {func(s *Spec) { s.Binaries = nil }, "image: no binaries"},
		"no time":      {func(s *Spec) { s.Created = time.Time{} }, "SOURCE_DATE_EPOCH"},
		"no revision":  {func(s *Spec) { s.Revision = "" }, "image: no revision"},
		"bad binary":   {func(s *Spec) { s.Binaries[0].Name = "bin/tlb" }, `name "bin/tlb" is not a plain file name`},
		"empty binary": {func(s *Spec) { s.Binaries[1].Data = nil }, "binary l7: empty file"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := testSpec(t)
			tc.change(&s)
			_, err := Build(s)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Build error = %v; want %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseEpoch(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    time.Time
		wantErr string
	}{
		"commit time":  {in: "1764000000", want: time.Unix(1764000000, 0).UTC()},
		"unset":        {in: "", wantErr: "SOURCE_DATE_EPOCH (or --source-date-epoch) is required"},
		"not a number": {in: "yesterday", wantErr: `SOURCE_DATE_EPOCH "yesterday"`},
		"negative":     {in: "-5", wantErr: `SOURCE_DATE_EPOCH "-5"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseEpoch(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseEpoch(%q) error = %v; want %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Errorf("parseEpoch(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

// TestRun drives the command end to end on fake binaries and checks that
// bad flags and missing binaries change nothing on disk.
func TestRun(t *testing.T) {
	// The binaries are copies of this test's own executable: an x86-64 ELF.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	elfData, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, n := range []string{"tlb", "netd", "l7", "ipam"} {
		if err := os.WriteFile(filepath.Join(bin, n), elfData, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "script"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "sub", "img.tar")
	good := []string{"--bin", bin, "--out", out, "--tag", "ghcr.io/tlbproject/tlb:v0.1.0", "--revision", "abc", "--source-date-epoch", "1764000000"}
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"missing revision": {args: good[:6], wantErr: "--revision are required"},
		"bad tag":          {args: replace(good, "ghcr.io/tlbproject/tlb:v0.1.0", "ghcr.io/Tlb:"), wantErr: `--tag "ghcr.io/Tlb:"`},
		"missing binary":   {args: append(append([]string{}, good...), "--binaries", "tlb,envoy"), wantErr: "binary envoy:"},
		"no epoch":         {args: replace(good, "1764000000", ""), wantErr: "SOURCE_DATE_EPOCH"},
		"other arch":       {args: append(append([]string{}, good...), "--arch", "arm64"), wantErr: "binary tlb: an ELF for EM_X86_64 (ELFCLASS64, ELFDATA2LSB), not for arm64"},
		"unknown arch":     {args: append(append([]string{}, good...), "--arch", "riscv64"), wantErr: `architecture "riscv64": the images are built for amd64 and arm64`},
		"not an ELF":       {args: append(append([]string{}, good...), "--binaries", "tlb,script"), wantErr: "binary script: not an ELF executable"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(tc.args, &stdout)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("run error = %v; want %q", err, tc.wantErr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a failed run left %s behind (stat: %v)", out, err)
			}
		})
	}
	var stdout bytes.Buffer
	if err := run(good, &stdout); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"image ghcr.io/tlbproject/tlb:v0.1.0", "image ID  sha256:", "manifest  sha256:", "BENCH image_size_mib ", "BENCH image_binary_ipam_mib "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	if _, err := tarball.ImageFromPath(out, nil); err != nil {
		t.Errorf("written archive does not load: %v", err)
	}
}

func replace(args []string, old, new string) []string {
	out := append([]string{}, args...)
	for i := range out {
		if out[i] == old {
			out[i] = new
		}
	}
	return out
}
