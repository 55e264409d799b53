package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// The built Envoy image, as make image-test sets it.
const (
	envEnvoyTar   = "TLB_ENVOY_IMAGE_TAR"
	envEnvoyAgain = "TLB_ENVOY_IMAGE_TAR_AGAIN"
	envEnvoyTag   = "TLB_ENVOY_IMAGE_TAG"
)

func builtEnvoyImage(t *testing.T) (path string, tag name.Tag) {
	t.Helper()
	path = os.Getenv(envEnvoyTar)
	if path == "" {
		t.Skipf("%s is not set: run make image-test to build the Envoy image and verify it", envEnvoyTar)
	}
	tag, err := name.NewTag(os.Getenv(envEnvoyTag), name.StrictValidation)
	if err != nil {
		t.Fatalf("%s: %v", envEnvoyTag, err)
	}
	return path, tag
}

// layerFile is one entry of a layer read back.
type layerFile struct {
	hdr  *tar.Header
	data []byte
}

// TestBuiltEnvoyImage reads the built Envoy tarball back and checks what
// deploy/envoy relies on: the tag, user 101, one layer holding exactly
// Envoy, the loader, the libraries it needs and the passwd files; Envoy
// carrying the same security.capability bytes setcap writes for
// cap_net_bind_service=ep (and nothing else carrying any); and the image's
// own loader and libraries starting its Envoy as user 101 in a chroot of
// the layer, which prints the release the tag names.
func TestBuiltEnvoyImage(t *testing.T) {
	tarPath, tag := builtEnvoyImage(t)
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(tarPath) })
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || strings.Join(m[0].RepoTags, ",") != tag.String() {
		t.Fatalf("manifest.json of %s = %+v; want one image tagged %s", tarPath, m, tag)
	}
	img, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("%s fails validation (digests, sizes, diff IDs): %v", tarPath, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]string{
		"user":       {cf.Config.User, "101:101"},
		"entrypoint": {strings.Join(cf.Config.Entrypoint, " "), "/usr/local/bin/envoy"},
		"os/arch":    {cf.OS + "/" + cf.Architecture, "linux/amd64"},
		"version":    {cf.Config.Labels[LabelVersion], tag.TagStr()},
		"source":     {cf.Config.Labels[LabelSource], "https://github.com/envoyproxy/envoy"},
	}
	for what, c := range checks {
		if c[0] != c[1] {
			t.Errorf("config %s = %q; want %q", what, c[0], c[1])
		}
	}
	revision := cf.Config.Labels[LabelRevision]
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(revision) {
		t.Errorf("revision label = %q; want the envoyproxy/envoy commit", revision)
	}
	if cf.Config.Labels[LabelLibc] == "" {
		t.Errorf("no %s label", LabelLibc)
	}
	t.Logf("image %s: Envoy revision %s, libc6 %s", tag, revision, cf.Config.Labels[LabelLibc])

	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("image has %d layers; want 1", len(layers))
	}
	files := readLayer(t, layers[0])
	var names []string
	for n, f := range files {
		if f.hdr.Typeflag == tar.TypeReg {
			names = append(names, n)
		}
		if f.hdr.Uid != 0 || f.hdr.Gid != 0 {
			t.Errorf("%s: owner %d:%d; want root", n, f.hdr.Uid, f.hdr.Gid)
		}
		for k := range f.hdr.PAXRecords {
			if strings.HasPrefix(k, paxXattrPrefix) && n != "usr/local/bin/envoy" {
				t.Errorf("%s carries %s; only Envoy carries an extended attribute", n, k)
			}
		}
	}
	sort.Strings(names)
	// What ldd lists for Envoy 1.40.0 on Debian 12, and the notice of the
	// library that ships them.
	want := []string{
		"etc/group", "etc/passwd",
		"lib/x86_64-linux-gnu/libc.so.6", "lib/x86_64-linux-gnu/libdl.so.2", "lib/x86_64-linux-gnu/libm.so.6",
		"lib/x86_64-linux-gnu/libpthread.so.0", "lib/x86_64-linux-gnu/librt.so.1",
		"lib64/ld-linux-x86-64.so.2",
		"usr/local/bin/envoy",
		"usr/share/doc/libc6/copyright",
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("files of the layer:\n  %s\nwant\n  %s", strings.Join(names, "\n  "), strings.Join(want, "\n  "))
	}
	envoy := files["usr/local/bin/envoy"]
	if envoy == nil {
		t.Fatal("no usr/local/bin/envoy in the layer")
	}
	if envoy.hdr.Mode != 0o755 {
		t.Errorf("envoy: mode %o; want 0755", envoy.hdr.Mode)
	}
	got := envoy.hdr.PAXRecords[paxXattrPrefix+XattrCapability]
	if wantCap := setcapBytes(t); got != string(wantCap) {
		t.Errorf("envoy's %s = %x; setcap cap_net_bind_service=ep writes %x", XattrCapability, got, wantCap)
	}
	for f, line := range map[string]string{"etc/passwd": "\nenvoy:x:101:101:", "etc/group": "\nenvoy:x:101:"} {
		if files[f] == nil || !strings.Contains(string(files[f].data), line) {
			t.Errorf("%s lacks %q", f, strings.TrimSpace(line))
		}
	}

	// Every library the binary and the libraries need is in the image.
	dir := t.TempDir()
	extract(t, dir, files)
	interp, _, err := elfDeps(filepath.Join(dir, "usr/local/bin/envoy"))
	if err != nil {
		t.Fatal(err)
	}
	if interp != "/lib64/ld-linux-x86-64.so.2" {
		t.Errorf("envoy's program interpreter = %q; want /lib64/ld-linux-x86-64.so.2", interp)
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "lib") && n != "usr/local/bin/envoy" {
			continue
		}
		_, needed, err := elfDeps(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		for _, lib := range needed {
			if files["lib/x86_64-linux-gnu/"+lib] == nil && "/"+path.Join("lib64", lib) != interp {
				t.Errorf("%s needs %s, which the image lacks", n, lib)
			}
		}
	}
	// The image's Envoy starts with nothing but the image: chroot into the
	// layer, user 101, empty environment.
	if os.Geteuid() != 0 {
		t.Fatal("running the image's Envoy in a chroot of its layer needs root (make image-test runs as root, as the lab does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/local/bin/envoy", "--version")
	cmd.Path = "/usr/local/bin/envoy" // inside the chroot, not looked up on the host
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: dir, Credential: &syscall.Credential{Uid: 101, Gid: 101}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("envoy --version in a chroot of the image as 101:101: %v\n%s", err, out)
	}
	if wantVer := revision + "/" + strings.TrimPrefix(tag.TagStr(), "v") + "/Clean/RELEASE/"; !strings.Contains(string(out), wantVer) {
		t.Errorf("the image's envoy --version printed %q; want %q", out, wantVer)
	}
	t.Logf("in the image as 101:101: %s", strings.TrimSpace(string(out)))
}

// readLayer reads every entry of a layer by its name (without a trailing
// slash).
func readLayer(t *testing.T, l interface {
	Uncompressed() (io.ReadCloser, error)
}) map[string]*layerFile {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]*layerFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = &layerFile{hdr: h, data: b}
	}
}

// extract writes the layer's directories and regular files below dir with
// their modes (not their owners or extended attributes).
func extract(t *testing.T, dir string, files map[string]*layerFile) {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := files[n]
		p := filepath.Join(dir, n)
		switch f.hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, os.FileMode(f.hdr.Mode)); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.WriteFile(p, f.data, os.FileMode(f.hdr.Mode)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("%s: type %c; the image holds only directories and regular files", n, f.hdr.Typeflag)
		}
	}
	// The temporary directory is 0700: user 101 must reach the chroot.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// setcapBytes runs setcap cap_net_bind_service=ep on a scratch file and
// reads back what it wrote.
func setcapBytes(t *testing.T) []byte {
	t.Helper()
	f := filepath.Join(t.TempDir(), "scratch")
	if err := os.WriteFile(f, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("setcap", "cap_net_bind_service=ep", f).CombinedOutput(); err != nil {
		t.Fatalf("setcap cap_net_bind_service=ep (libcap2-bin, as root; tools/deps.sh installs it): %v: %s", err, out)
	}
	buf := make([]byte, 64)
	n, err := syscall.Getxattr(f, XattrCapability, buf)
	if err != nil {
		t.Fatalf("read %s of the file setcap wrote: %v", XattrCapability, err)
	}
	t.Logf("setcap cap_net_bind_service=ep writes %s = %s", XattrCapability, hex.EncodeToString(buf[:n]))
	return buf[:n]
}

// TestBuiltEnvoyTagMatchesManifests: every reference to the Envoy image in
// deploy/ names the built tag.
func TestBuiltEnvoyTagMatchesManifests(t *testing.T) {
	_, tag := builtEnvoyImage(t)
	refs, err := imageRefs(filepath.Join("..", "..", "deploy"), "ghcr.io/tlbproject/envoy:")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) == 0 {
		t.Fatal("no image: ghcr.io/tlbproject/envoy: reference found in deploy/")
	}
	for _, r := range refs {
		if r.image != tag.String() {
			t.Errorf("%s:%d names %s; the built Envoy image is %s", r.file, r.line, r.image, tag)
		}
	}
}

// TestRebuildEnvoySameDigest: a second build gives the same tarball.
func TestRebuildEnvoySameDigest(t *testing.T) {
	p, tag := builtEnvoyImage(t)
	again := os.Getenv(envEnvoyAgain)
	if again == "" {
		t.Fatalf("%s is not set; make image-test builds the Envoy image twice", envEnvoyAgain)
	}
	sameImage(t, tag, p, again)
}

// sameImage fails unless both tarballs hold one digest, byte for byte.
func sameImage(t *testing.T, tag name.Tag, a, b string) {
	t.Helper()
	var digests [2]string
	for i, p := range []string{a, b} {
		img, err := tarball.ImageFromPath(p, &tag)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests[i] = d.String()
	}
	if digests[0] != digests[1] {
		t.Fatalf("two builds gave digests %s and %s", digests[0], digests[1])
	}
	ab, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ab, bb) {
		t.Errorf("two builds gave the same digest but different tarballs %s and %s", a, b)
	}
	t.Logf("two builds: digest %s", digests[0])
}
