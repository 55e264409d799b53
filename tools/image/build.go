package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Label keys of the OCI image annotation spec that the image carries.
const (
	LabelSource   = "org.opencontainers.image.source"
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
)

// Spec says what goes into the image. Equal Specs give images with equal
// digests.
type Spec struct {
	// Tag is the image's name, e.g. ghcr.io/tlbproject/tlb:v0.1.0; its tag
	// part is the version label.
	Tag name.Tag
	// Binaries go to BinDir with mode 0755; the first is the entrypoint.
	Binaries []Binary
	// Created is the image's creation time and every file's mtime: the
	// commit time (SOURCE_DATE_EPOCH), never the build's clock.
	Created time.Time
	// Source is the repository URL (source label).
	Source string
	// Revision is the commit the binaries were built from (revision label).
	Revision string
	// Arch is the Go architecture the binaries are built for (amd64,
	// arm64): the image's platform.
	Arch string
}

// Build assembles the image: FROM scratch, one layer holding the binaries,
// /etc/passwd and /etc/group, run as NonRootUser with the first binary as
// entrypoint.
func Build(s Spec) (v1.Image, error) {
	if len(s.Binaries) == 0 {
		return nil, errors.New("image: no binaries")
	}
	if s.Created.IsZero() {
		return nil, errors.New("image: no creation time (set SOURCE_DATE_EPOCH)")
	}
	if s.Revision == "" {
		return nil, errors.New("image: no revision")
	}
	entries, err := rootFS(s.Binaries)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", s.Tag, err)
	}
	names := make([]string, len(s.Binaries))
	for i, b := range s.Binaries {
		names[i] = b.Name
	}
	return assemble(layout{
		tag:     s.Tag,
		arch:    s.Arch,
		entries: entries,
		created: s.Created,
		config: v1.Config{
			User:       NonRootUser,
			Entrypoint: []string{path.Join(BinDir, s.Binaries[0].Name)},
			Env:        []string{"PATH=" + BinDir},
			WorkingDir: "/",
			Labels: map[string]string{
				LabelSource:   s.Source,
				LabelVersion:  s.Tag.TagStr(),
				LabelRevision: s.Revision,
			},
		},
		createdBy: "tools/image: " + BinDir + "/{" + strings.Join(names, ",") + "}, /etc/passwd, /etc/group",
		comment:   "revision " + s.Revision,
	})
}

// layout is an image in general form, as Build and BuildEnvoy describe
// theirs: the entries of its one layer, how it runs, and its history.
type layout struct {
	tag       name.Tag
	arch      string
	entries   []entry
	created   time.Time
	config    v1.Config
	createdBy string
	comment   string
}

// assemble makes the image of a layout: FROM scratch, one layer, every
// time in it l.created.
func assemble(l layout) (v1.Image, error) {
	plat, err := platform(l.arch)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", l.tag, err)
	}
	raw, err := layerTar(l.entries, l.created)
	if err != nil {
		return nil, fmt.Errorf("image %s: %w", l.tag, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("image %s: make layer: %w", l.tag, err)
	}
	created := v1.Time{Time: l.created.UTC().Truncate(time.Second)}
	cfg := &v1.ConfigFile{
		Architecture: plat.Architecture,
		Variant:      plat.Variant,
		OS:           plat.OS,
		Created:      created,
		RootFS:       v1.RootFS{Type: "layers"},
		Config:       l.config,
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, fmt.Errorf("image %s: set config: %w", l.tag, err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: created, CreatedBy: l.createdBy, Comment: l.comment},
	})
	if err != nil {
		return nil, fmt.Errorf("image %s: add layer: %w", l.tag, err)
	}
	return img, nil
}
