package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// The built image is verified by reading its tarball back. make image-test
// sets these; without them (a plain go test) there is no built image.
const (
	envTar   = "TLB_IMAGE_TAR"       // the tarball of make image
	envAgain = "TLB_IMAGE_TAR_AGAIN" // a second build of the same commit
	envTag   = "TLB_IMAGE_TAG"       // the tag it was built with
)

func builtImage(t *testing.T) (path string, tag name.Tag) {
	t.Helper()
	path = os.Getenv(envTar)
	if path == "" {
		t.Skipf("%s is not set: run make image-test to build the image and verify it", envTar)
	}
	tag, err := name.NewTag(os.Getenv(envTag), name.StrictValidation)
	if err != nil {
		t.Fatalf("%s: %v", envTag, err)
	}
	return path, tag
}

// TestBuiltImage reads the built tarball back with go-containerregistry and
// checks everything the manifests rely on: the tag, the config, and each
// binary present, 0755, root-owned, a static x86-64 ELF that runs on this
// host with no libc and prints its usage.
func TestBuiltImage(t *testing.T) {
	path, tag := builtImage(t)
	// How each binary shows its usage, and what it prints.
	usageRuns := map[string]struct {
		args     []string
		wantCode int
		want     string
	}{
		"tlb":  {args: []string{"--help"}, wantCode: 0, want: "usage:\n  tlb run"},
		"netd": {args: []string{"--help"}, wantCode: 2, want: "usage: netd run --config FILE"},
		"l7":   {args: nil, wantCode: 2, want: "usage: l7 serve --group G --config DIR"},
		"ipam": {args: []string{"--help"}, wantCode: 0, want: "-leader-elect"},
	}
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || strings.Join(m[0].RepoTags, ",") != tag.String() {
		t.Fatalf("manifest.json of %s = %+v; want one image tagged %s", path, m, tag)
	}
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("%s fails validation (digests, sizes, diff IDs): %v", path, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("config User = %q; want 65532:65532", cf.Config.User)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("platform = %s/%s; want linux/amd64", cf.OS, cf.Architecture)
	}
	if v := cf.Config.Labels[LabelVersion]; v != tag.TagStr() {
		t.Errorf("version label = %q; want %q", v, tag.TagStr())
	}
	if r := cf.Config.Labels[LabelRevision]; !regexp.MustCompile(`^[0-9a-f]{40}(-dirty)?$`).MatchString(r) {
		t.Errorf("revision label = %q; want a commit hash", r)
	}
	t.Logf("image %s: created %s, revision %s", tag, cf.Created.UTC().Format(time.RFC3339), cf.Config.Labels[LabelRevision])

	layers, err := img.Layers()
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
	dir := t.TempDir()
	seen := map[string]bool{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: owner %d:%d; want root", h.Name, h.Uid, h.Gid)
		}
		bin, ok := strings.CutPrefix(h.Name, "usr/local/bin/")
		if !ok || bin == "" {
			continue
		}
		seen[bin] = true
		if h.Typeflag != tar.TypeReg || h.Mode != 0o755 {
			t.Errorf("%s: type %c mode %o; want a regular file 0755", h.Name, h.Typeflag, h.Mode)
		}
		p := filepath.Join(dir, bin)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f MiB", h.Name, mib(n))
	}
	for bin, u := range usageRuns {
		t.Run(bin, func(t *testing.T) {
			if !seen[bin] {
				t.Fatalf("image lacks /usr/local/bin/%s", bin)
			}
			p := filepath.Join(dir, bin)
			if err := staticX8664(p); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, p, u.args...)
			cmd.Env = []string{"PATH=/nonexistent"} // as in the image: nothing else to find
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("run %s %v: %v", bin, u.args, err)
			}
			if code != u.wantCode || !strings.Contains(string(out), u.want) {
				t.Errorf("%s %v: exit %d, output:\n%s\nwant exit %d and %q", bin, u.args, code, out, u.wantCode, u.want)
			}
		})
	}
	// The l7 pod's init container copy-l7 runs "l7 install /run/tlb" (the
	// image has no cp) into the node directory it shares with Envoy, whose
	// preStop runs that copy: the binary of the image must copy itself.
	t.Run("l7 install", func(t *testing.T) {
		dst := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		l7 := filepath.Join(dir, "l7")
		if out, err := exec.CommandContext(ctx, l7, "install", dst).CombinedOutput(); err != nil {
			t.Fatalf("l7 install %s: %v\n%s", dst, err, out)
		}
		want, err := os.ReadFile(l7)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dst, "l7"))
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(filepath.Join(dst, "l7")); err != nil || st.Mode().Perm() != 0o755 || !bytes.Equal(got, want) {
			t.Errorf("l7 install wrote %d bytes (stat %v, %v); want the %d bytes of l7, mode 0755", len(got), st, err, len(want))
		}
	})
	if len(seen) != len(usageRuns) {
		t.Errorf("image has binaries %v; want exactly %d", seen, len(usageRuns))
	}
}

// staticX8664 says why the file at p is not a static x86-64 Linux
// executable: one with a program interpreter (ld.so) or shared libraries
// would not start in a FROM-scratch image.
func staticX8664(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("%s: not an ELF file: %w", p, err)
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 || f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		return fmt.Errorf("%s: %v %v %v; want a 64-bit x86-64 Linux executable", p, f.Class, f.Machine, f.OSABI)
	}
	if f.Type != elf.ET_EXEC {
		return fmt.Errorf("%s: type %v; want ET_EXEC (static, not PIE)", p, f.Type)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
			return fmt.Errorf("%s: has %v; want a static executable (no dynamic loader in the image)", p, prog.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("%s: needs shared libraries %v", p, libs)
	}
	return nil
}

// TestStaticX8664Rejects: the ELF check fails on what would not run in the
// image: a dynamically linked host program and a file that is not ELF.
func TestStaticX8664Rejects(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := staticX8664(notELF); err == nil || !strings.Contains(err.Error(), "not an ELF file") {
		t.Errorf("staticX8664(shell script) = %v; want not an ELF file", err)
	}
	// /bin/sh on Debian is dash, dynamically linked against libc.
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := staticX8664(sh); err == nil {
		t.Errorf("staticX8664(%s) = nil; want it rejected as dynamic", sh)
	}
}

// TestBuiltTagMatchesManifests: every image reference of this image in
// deploy/ names exactly the built tag, so what make image builds is what
// kubectl apply -k runs.
func TestBuiltTagMatchesManifests(t *testing.T) {
	_, tag := builtImage(t)
	refs, err := imageRefs(filepath.Join("..", "..", "deploy"), "ghcr.io/tlbproject/tlb:")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) == 0 {
		t.Fatal("no image: ghcr.io/tlbproject/tlb: reference found in deploy/")
	}
	for _, r := range refs {
		if r.image != tag.String() {
			t.Errorf("%s:%d names %s; the built image is %s", r.file, r.line, r.image, tag)
		}
	}
	t.Logf("%d references in deploy/ name %s", len(refs), tag)
}

// imageRef is one "image:" line of a manifest.
type imageRef struct {
	file  string
	line  int
	image string
}

// imageRefs finds every "image: PREFIX..." value in the YAML files under
// dir, but for dir/releases: the releases' rendered manifests name their
// own tags by digest (integration/k8s TestReleaseManifests).
func imageRefs(dir, prefix string) ([]imageRef, error) {
	var refs []imageRef
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p == filepath.Join(dir, "releases") {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			v, ok := strings.CutPrefix(strings.TrimLeft(sc.Text(), " -"), "image:")
			if !ok {
				continue
			}
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			if strings.HasPrefix(v, prefix) {
				refs = append(refs, imageRef{file: p, line: n, image: v})
			}
		}
		return sc.Err()
	})
	return refs, err
}

func TestImageRefs(t *testing.T) {
	dir := t.TempDir()
	yaml := "spec:\n  containers:\n    - image: ghcr.io/tlbproject/tlb:v0.1.0\n      name: a\n    - name: b\n      image: \"ghcr.io/tlbproject/tlb:v0.0.9\"\n    - image: envoyproxy/envoy:v1.36\n"
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	refs, err := imageRefs(dir, "ghcr.io/tlbproject/tlb:")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(refs)
	want := fmt.Sprint([]imageRef{{filepath.Join(dir, "a.yaml"), 3, "ghcr.io/tlbproject/tlb:v0.1.0"}, {filepath.Join(dir, "a.yaml"), 6, "ghcr.io/tlbproject/tlb:v0.0.9"}})
	if got != want {
		t.Errorf("imageRefs = %s; want %s", got, want)
	}
}

// TestRebuildSameDigest: a second build of the same commit gives the same
// image, byte for byte.
func TestRebuildSameDigest(t *testing.T) {
	path, tag := builtImage(t)
	again := os.Getenv(envAgain)
	if again == "" {
		t.Fatalf("%s is not set; make image-test builds the image twice", envAgain)
	}
	sameImage(t, tag, path, again)
}
