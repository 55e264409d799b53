package main

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// EnvoyPath is where the Envoy image holds the binary; deploy/envoy runs it
// from here as the container's own command.
const EnvoyPath = "/usr/local/bin/envoy"

// EnvoySource is the repository of the release the Envoy image packages.
const EnvoySource = "https://github.com/envoyproxy/envoy"

// LabelLibc is the label that names the Debian libc6 version whose loader
// and libraries the Envoy image holds.
const LabelLibc = "io.tlbproject.image.libc6"

// EnvoyRelease is what an Envoy binary says of itself (envoy --version).
type EnvoyRelease struct {
	// Version is the release, e.g. 1.40.0.
	Version string
	// Revision is the envoyproxy/envoy commit it was built from.
	Revision string
}

// ParseEnvoyVersion reads the output of `envoy --version`. Only a clean
// release build is accepted: the image must hold an official release.
func ParseEnvoyVersion(out string) (EnvoyRelease, error) {
	// e.g. "envoy  version: 9e55...23/1.40.0/Clean/RELEASE/BoringSSL"
	m := regexp.MustCompile(`version: ([0-9a-f]{40})/([0-9]+\.[0-9]+\.[0-9]+)/Clean/RELEASE/`).FindStringSubmatch(out)
	if m == nil {
		return EnvoyRelease{}, fmt.Errorf("envoy --version printed %q; want \"version: COMMIT/X.Y.Z/Clean/RELEASE/...\" of a release build", strings.TrimSpace(out))
	}
	return EnvoyRelease{Revision: m[1], Version: m[2]}, nil
}

// EnvoySpec says what goes into the Envoy image. Equal specs give images
// with equal digests.
type EnvoySpec struct {
	// Tag is the image's name, e.g. ghcr.io/tlbproject/envoy:v1.40.0; its
	// tag part must be "v" and the release's version.
	Tag name.Tag
	// Envoy is the official binary and Release what it says it is.
	Envoy   []byte
	Release EnvoyRelease
	// Runtime are the dynamic loader and the shared libraries Envoy needs
	// (runtimeFiles), with any notices to ship beside them (the libraries'
	// copyright file).
	Runtime []File
	// Libc is the Debian libc6 version they come from (LabelLibc).
	Libc string
	// Created is the creation time and every file's mtime
	// (SOURCE_DATE_EPOCH).
	Created time.Time
	// Builder is the commit of this repository that built the image,
	// recorded in the layer's history.
	Builder string
	// Arch is the Go architecture of the binary and libraries (amd64,
	// arm64): the image's platform.
	Arch string
}

// BuildEnvoy assembles the Envoy image: FROM scratch, one layer holding
// Envoy at EnvoyPath with the file capability cap_net_bind_service=ep (so
// that user 101, with no ambient capabilities, can bind VIP:80 and
// VIP:443 when the container grants NET_BIND_SERVICE), the loader and
// libraries it needs, and /etc/passwd and /etc/group naming user 101
// (envoy). It runs as EnvoyUser with Envoy as entrypoint.
func BuildEnvoy(s EnvoySpec) (v1.Image, error) {
	if len(s.Envoy) == 0 {
		return nil, errors.New("envoy image: no Envoy binary")
	}
	if want := "v" + s.Release.Version; s.Tag.TagStr() != want {
		return nil, fmt.Errorf("envoy image %s: the binary is Envoy %s; its tag must be %s", s.Tag, s.Release.Version, want)
	}
	if s.Release.Revision == "" {
		return nil, errors.New("envoy image: no Envoy revision")
	}
	if s.Created.IsZero() {
		return nil, errors.New("envoy image: no creation time (set SOURCE_DATE_EPOCH)")
	}
	if s.Builder == "" {
		return nil, errors.New("envoy image: no builder revision")
	}
	if s.Libc == "" {
		return nil, errors.New("envoy image: no libc6 version")
	}
	entries, err := envoyRootFS(s.Envoy, s.Runtime)
	if err != nil {
		return nil, fmt.Errorf("envoy image %s: %w", s.Tag, err)
	}
	paths := make([]string, len(s.Runtime))
	for i, f := range s.Runtime {
		paths[i] = f.Path
	}
	return assemble(layout{
		tag:     s.Tag,
		arch:    s.Arch,
		entries: entries,
		created: s.Created,
		config: v1.Config{
			User:       EnvoyUser,
			Entrypoint: []string{EnvoyPath},
			Env:        []string{"PATH=" + BinDir},
			WorkingDir: "/",
			Labels: map[string]string{
				LabelSource:   EnvoySource,
				LabelVersion:  s.Tag.TagStr(),
				LabelRevision: s.Release.Revision,
				LabelLibc:     s.Libc,
			},
		},
		createdBy: fmt.Sprintf("tools/image envoy: %s (Envoy %s, %s=ep), %s, /etc/passwd, /etc/group",
			EnvoyPath, s.Release.Version, XattrCapability, strings.Join(paths, ", ")),
		comment: "revision " + s.Builder,
	})
}

// envoyRootFS lists the entries of the Envoy image's layer.
func envoyRootFS(envoy []byte, runtime []File) ([]entry, error) {
	caps, err := fileCapability(CapNetBindService)
	if err != nil {
		return nil, err
	}
	files := map[string]entry{
		"/etc/passwd": {path: "/etc/passwd", mode: 0o644, data: []byte(envoyPasswd)},
		"/etc/group":  {path: "/etc/group", mode: 0o644, data: []byte(envoyGroup)},
		EnvoyPath:     {path: EnvoyPath, mode: 0o755, data: envoy, xattrs: map[string]string{XattrCapability: string(caps)}},
	}
	for _, f := range runtime {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path {
			return nil, fmt.Errorf("runtime file %q: not an absolute clean path", f.Path)
		}
		if len(f.Data) == 0 {
			return nil, fmt.Errorf("runtime file %s: empty", f.Path)
		}
		if _, dup := files[f.Path]; dup {
			return nil, fmt.Errorf("runtime file %s: listed twice or in the way of the image's own", f.Path)
		}
		files[f.Path] = entry{path: f.Path, mode: f.Mode & 0o777, data: f.Data}
	}
	return tree(files), nil
}
