package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ocilayout "github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// untar unpacks an uncompressed tarball into a new directory.
func untar(t *testing.T, raw []byte) string {
	t.Helper()
	dir := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIndexJoinsArchitectures builds an amd64 and an arm64 image, joins
// them and reads the OCI layout tarball back as containerd's import would:
// one image named by its tag, an index listing both platforms with each
// image's own digest, valid blobs; the same inputs give the same bytes; a
// second image of one platform is refused.
func TestIndexJoinsArchitectures(t *testing.T) {
	s := testSpec(t)
	amd, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Arch = "arm64"
	arm, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := Index([]v1.Image{amd, arm})
	if err != nil {
		t.Fatal(err)
	}
	mtime := time.Unix(1764000000, 0)
	raw, err := layoutTar(idx, s.Tag, mtime)
	if err != nil {
		t.Fatal(err)
	}
	again, err := layoutTar(idx, s.Tag, mtime)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, again) {
		t.Error("two layout tarballs of one index differ")
	}

	named := namedIndex(t, raw, s.Tag)
	want, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := named.Digest(); d != want {
		t.Errorf("index.json names %s; want the index %s", d, want)
	}
	got := named
	if err := validate.Index(got); err != nil {
		t.Fatalf("the index fails validation: %v", err)
	}
	im, err := got.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for i, m := range im.Manifests {
		plats = append(plats, m.Platform.String())
		d, err := []v1.Image{amd, arm}[i].Digest()
		if err != nil {
			t.Fatal(err)
		}
		if m.Digest != d {
			t.Errorf("%s: digest %s; want the image's %s", m.Platform, m.Digest, d)
		}
	}
	if strings.Join(plats, " ") != "linux/amd64 linux/arm64/v8" {
		t.Errorf("platforms %v; want linux/amd64 linux/arm64/v8", plats)
	}

	if _, err := Index([]v1.Image{amd, arm, amd}); err == nil || !strings.Contains(err.Error(), "a second image for linux/amd64") {
		t.Errorf("Index with two amd64 images = %v; want it refused", err)
	}
}

// namedIndex reads an OCI layout tarball as containerd's import does: its
// index.json must name one image, tag, an index, which it returns.
func namedIndex(t *testing.T, raw []byte, tag name.Tag) v1.ImageIndex {
	t.Helper()
	p, err := ocilayout.FromPath(untar(t, raw))
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || tm.Manifests[0].Annotations[AnnotationContainerdName] != tag.String() ||
		tm.Manifests[0].Annotations[AnnotationRefName] != tag.String() {
		t.Fatalf("index.json lists %+v; want one index named %s", tm.Manifests, tag)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}
