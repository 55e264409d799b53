package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	ocilayout "github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations of the OCI image layout's index.json naming the image, the
// OCI one and the one containerd's import reads.
const (
	AnnotationRefName        = "org.opencontainers.image.ref.name"
	AnnotationContainerdName = "io.containerd.image.name"
)

// runIndex is "image index": it joins per-architecture docker archives of
// one tag in a multi-architecture index and writes it as an OCI image
// layout tarball.
func runIndex(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image index", flag.ContinueOnError)
	out := fs.String("out", "", "OCI image layout tarball to write")
	tag := fs.String("tag", "", "the image's name and tag; every archive must hold it")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "mtime of the tarball's entries, seconds since 1970 (default $SOURCE_DATE_EPOCH)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *tag == "" || fs.NArg() == 0 {
		return errors.New("usage: image index --out FILE.oci.tar --tag T ARCHIVE.tar [ARCHIVE.tar ...]")
	}
	t, created, err := tagAndTime(*tag, *epoch)
	if err != nil {
		return err
	}
	imgs := make([]v1.Image, 0, fs.NArg())
	for _, p := range fs.Args() {
		img, err := tarball.ImageFromPath(p, &t)
		if err != nil {
			return fmt.Errorf("archive %s: no image %s in it: %w", p, t, err)
		}
		imgs = append(imgs, img)
	}
	idx, err := Index(imgs)
	if err != nil {
		return fmt.Errorf("index %s: %w", t, err)
	}
	raw, err := layoutTar(idx, t, created)
	if err != nil {
		return fmt.Errorf("index %s: %w", t, err)
	}
	if err := replaceFile(*out, func(tmp string) error { return os.WriteFile(tmp, raw, 0o644) }); err != nil {
		return fmt.Errorf("index %s: %w", t, err)
	}
	return reportIndex(stdout, *out, raw, t, idx)
}

// Index joins images, one per platform (read from each image's config), in
// one multi-architecture index (a Docker manifest list, as the images are
// Docker schema 2 manifests), in the order given.
func Index(imgs []v1.Image) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.DockerManifestList)
	seen := map[string]bool{}
	adds := make([]mutate.IndexAddendum, 0, len(imgs))
	for i, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("image %d: config: %w", i, err)
		}
		want, err := platform(cf.Architecture)
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", i, err)
		}
		got := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
		if !got.Equals(want) {
			return nil, fmt.Errorf("image %d: platform %s, want %s", i, got, want)
		}
		if seen[got.String()] {
			return nil, fmt.Errorf("image %d: a second image for %s", i, got)
		}
		seen[got.String()] = true
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &got}})
	}
	return mutate.AppendManifests(idx, adds...), nil
}

// layoutTar writes idx as an OCI image layout (oci-layout, index.json
// naming it t, blobs/sha256/...) in an uncompressed tarball whose bytes
// depend only on idx, t and mtime.
func layoutTar(idx v1.ImageIndex, t name.Tag, mtime time.Time) ([]byte, error) {
	dir, err := os.MkdirTemp("", "tlb-image-layout-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	p, err := ocilayout.Write(dir, empty.Index)
	if err != nil {
		return nil, fmt.Errorf("OCI layout: %w", err)
	}
	if err := p.AppendIndex(idx, ocilayout.WithAnnotations(map[string]string{
		AnnotationRefName: t.String(), AnnotationContainerdName: t.String(),
	})); err != nil {
		return nil, fmt.Errorf("OCI layout: %w", err)
	}
	files := map[string]entry{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		files[rel] = entry{path: rel, mode: 0o644, data: data}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("OCI layout: %w", err)
	}
	return layerTar(tree(files), mtime)
}

// reportIndex prints the index's digest (what manifests pin), each
// platform's manifest digest, and the tarball's size and SHA-256.
func reportIndex(w io.Writer, out string, raw []byte, t name.Tag, idx v1.ImageIndex) error {
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(raw)
	var r strings.Builder
	fmt.Fprintf(&r, "index %s\n", t)
	fmt.Fprintf(&r, "  layout    %s (%d bytes, sha256:%s)\n", out, len(raw), hex.EncodeToString(sum[:]))
	fmt.Fprintf(&r, "  index     %s\n", digest)
	for _, m := range im.Manifests {
		fmt.Fprintf(&r, "  %-9s %s\n", m.Platform.String(), m.Digest)
	}
	_, err = io.WriteString(w, r.String())
	return err
}
