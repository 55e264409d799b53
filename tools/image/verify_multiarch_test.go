package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// archTar is the tarball build.sh writes beside OUT.tar for arch.
func archTar(out, arch string) string { return strings.TrimSuffix(out, ".tar") + "-" + arch + ".tar" }

// ociTar is the multi-architecture index build.sh writes beside OUT.tar.
func ociTar(out string) string { return strings.TrimSuffix(out, ".tar") + ".oci.tar" }

// layerFiles reads the one layer of the image in the docker archive p.
func layerFiles(t *testing.T, p string, tag name.Tag) (v1.Image, map[string]*layerFile) {
	t.Helper()
	img, err := tarball.ImageFromPath(p, &tag)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("%s fails validation: %v", p, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != "arm64" || cf.Variant != "v8" {
		t.Errorf("%s: platform %s/%s/%s; want linux/arm64/v8", p, cf.OS, cf.Architecture, cf.Variant)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%s: %d layers (%v); want 1", p, len(layers), err)
	}
	return img, readLayer(t, layers[0])
}

// TestBuiltArm64Image: every binary of the arm64 TLB image is a 64-bit
// arm64 ELF executable, and each runs (under qemu-user, as an arm64 node
// would run it) printing its build with --version.
func TestBuiltArm64Image(t *testing.T) {
	out, tag := builtImage(t)
	_, files := layerFiles(t, archTar(out, "arm64"), tag)
	dir := t.TempDir()
	var seen []string
	for n, f := range files {
		bin, ok := strings.CutPrefix(n, "usr/local/bin/")
		if !ok || bin == "" {
			continue
		}
		seen = append(seen, bin)
		if err := checkExecutable(n, f.data, "arm64"); err != nil {
			t.Error(err)
			continue
		}
		p := filepath.Join(dir, bin)
		if err := os.WriteFile(p, f.data, 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command("qemu-aarch64-static", p, "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(got), "linux/arm64") {
			t.Errorf("%s --version under qemu-aarch64-static: %v: %q; want it to name linux/arm64", bin, err, got)
		}
	}
	if strings.Join(sortedCopy(seen), ",") != "ipam,l7,netd,tlb" {
		t.Errorf("binaries %v; want ipam, l7, netd, tlb", seen)
	}
}

// TestBuiltArm64EnvoyImage: the arm64 Envoy image holds an arm64 Envoy
// and the arm64 loader and libraries it needs: started from the image's
// own files (qemu-user with the layer as its library root), it prints the
// tagged release.
func TestBuiltArm64EnvoyImage(t *testing.T) {
	out, tag := builtEnvoyImage(t)
	_, files := layerFiles(t, archTar(out, "arm64"), tag)
	f, ok := files[strings.TrimPrefix(EnvoyPath, "/")]
	if !ok {
		t.Fatalf("no %s in the arm64 Envoy image", EnvoyPath)
	}
	if err := checkExecutable(EnvoyPath, f.data, "arm64"); err != nil {
		t.Fatal(err)
	}
	if _, ok := files["lib/ld-linux-aarch64.so.1"]; !ok {
		t.Error("no arm64 loader /lib/ld-linux-aarch64.so.1 in the image")
	}
	root := t.TempDir()
	extract(t, root, files)
	got, err := exec.Command("qemu-aarch64-static", "-L", root, filepath.Join(root, EnvoyPath), "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(got), "/"+strings.TrimPrefix(tag.TagStr(), "v")+"/Clean/RELEASE/") {
		t.Errorf("arm64 envoy --version from the image's files: %v: %q; want release %s", err, got, tag.TagStr())
	}
}

// TestBuiltIndexes: each multi-architecture index lists the amd64 and the
// arm64 image, by the digests of the archives built beside it, and is named
// by the image's tag.
func TestBuiltIndexes(t *testing.T) {
	tlbOut, tlbTag := builtImage(t)
	envoyOut, envoyTag := builtEnvoyImage(t)
	for _, c := range []struct {
		out string
		tag name.Tag
	}{{tlbOut, tlbTag}, {envoyOut, envoyTag}} {
		raw, err := os.ReadFile(ociTar(c.out))
		if err != nil {
			t.Fatal(err)
		}
		idx := namedIndex(t, raw, c.tag)
		if err := validate.Index(idx); err != nil {
			t.Fatalf("%s: %v", ociTar(c.out), err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"linux/amd64": c.out, "linux/arm64/v8": archTar(c.out, "arm64")}
		if len(im.Manifests) != len(want) {
			t.Errorf("%s lists %d images; want 2", ociTar(c.out), len(im.Manifests))
		}
		for _, m := range im.Manifests {
			src, ok := want[m.Platform.String()]
			if !ok {
				t.Errorf("%s lists %s", ociTar(c.out), m.Platform)
				continue
			}
			img, err := tarball.ImageFromPath(src, &c.tag)
			if err != nil {
				t.Fatal(err)
			}
			d, err := img.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if d != m.Digest {
				t.Errorf("%s: %s is %s; the archive %s holds %s", ociTar(c.out), m.Platform, m.Digest, src, d)
			}
		}
		d, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: index %s", c.tag, d)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return out
}
