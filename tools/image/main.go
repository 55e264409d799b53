// Command image builds the container images the manifests in deploy/ name,
// without a Docker engine, each written as a docker-archive tarball that
// `docker load` and `ctr import` accept.
//
// The TLB image: FROM scratch, one layer with the static binaries in
// /usr/local/bin plus /etc/passwd and /etc/group.
//
//	image --bin DIR --out FILE.tar --tag ghcr.io/tlbproject/tlb:v0.1.0 --revision SHA
//
// The Envoy image (deploy/envoy): FROM scratch, one layer with the
// official Envoy binary carrying the file capability
// cap_net_bind_service=ep, the dynamic loader and libraries it needs from
// the build machine, and /etc/passwd and /etc/group naming user 101.
//
//	image envoy --envoy FILE --out FILE.tar --tag ghcr.io/tlbproject/envoy:v1.40.0 --revision SHA --libc-version V
//
// Each is built per architecture (--arch amd64 or arm64; the binaries
// must be ELF executables of it). The multi-architecture image joins the
// per-architecture tarballs in one index, written as an OCI image layout
// tarball (`ctr import` takes it; a registry push keeps its digest):
//
//	image index --out FILE.oci.tar --tag T AMD64.tar ARM64.tar
//
// The images are deterministic: file mtimes and the creation time come from
// SOURCE_DATE_EPOCH (or --source-date-epoch), so two builds of one commit
// give one digest. It prints the digests and sizes.
//
// It owns only the file it writes; it does not build or fetch the binaries
// (make image does), push, or touch a container engine.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// defaultBinaries are the binaries of the image, entrypoint first.
const defaultBinaries = "tlb,netd,l7,ipam"

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "envoy" {
		return runEnvoy(args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "index" {
		return runIndex(args[1:], stdout)
	}
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	binDir := fs.String("bin", "", "directory holding the built binaries")
	bins := fs.String("binaries", defaultBinaries, "comma-separated binaries to take from --bin, entrypoint first")
	out := fs.String("out", "", "docker-archive tarball to write")
	tag := fs.String("tag", "", "image name and tag, e.g. ghcr.io/tlbproject/tlb:v0.1.0")
	source := fs.String("source", "https://github.com/tlbproject/tlb", "repository URL for the source label")
	revision := fs.String("revision", "", "commit of the binaries, for the revision label")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "creation time and file mtimes, seconds since 1970 (default $SOURCE_DATE_EPOCH)")
	arch := fs.String("arch", "amd64", "architecture the binaries are built for: amd64 or arm64")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binDir == "" || *out == "" || *tag == "" || *revision == "" {
		return errors.New("--bin, --out, --tag and --revision are required")
	}
	t, created, err := tagAndTime(*tag, *epoch)
	if err != nil {
		return err
	}
	binaries, err := readBinaries(*binDir, strings.Split(*bins, ","))
	if err != nil {
		return err
	}
	for _, b := range binaries {
		if err := checkExecutable("binary "+b.Name, b.Data, *arch); err != nil {
			return err
		}
	}
	img, err := Build(Spec{Tag: t, Binaries: binaries, Created: created, Source: *source, Revision: *revision, Arch: *arch})
	if err != nil {
		return err
	}
	if err := writeArchive(*out, t, img); err != nil {
		return err
	}
	return report(stdout, benchName("image", *arch), *out, t, img, binaries, nil)
}

// writeArchive writes img tagged t as a docker archive at out.
func writeArchive(out string, t name.Tag, img v1.Image) error {
	err := replaceFile(out, func(tmp string) error { return tarball.WriteToFile(tmp, t, img) })
	if err != nil {
		return fmt.Errorf("write image %s: %w", t, err)
	}
	return nil
}

// replaceFile has write make the file at a temporary path beside out and
// renames it to out, so a failed build never leaves a truncated tarball
// where docker load or ctr import would find it.
func replaceFile(out string, write func(tmp string) error) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("create directory of %s: %w", out, err)
	}
	tmp := out + ".tmp"
	if err := write(tmp); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := os.Rename(tmp, out); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("rename %s to %s: %w", tmp, out, err)
	}
	return nil
}

// tagAndTime reads the --tag and SOURCE_DATE_EPOCH flags every command
// takes.
func tagAndTime(tag, epoch string) (name.Tag, time.Time, error) {
	t, err := name.NewTag(tag, name.StrictValidation)
	if err != nil {
		return name.Tag{}, time.Time{}, fmt.Errorf("--tag %q: %w", tag, err)
	}
	created, err := parseEpoch(epoch)
	if err != nil {
		return name.Tag{}, time.Time{}, err
	}
	return t, created, nil
}

// parseEpoch reads SOURCE_DATE_EPOCH. It is required: the build's clock
// would make every build's digest different.
func parseEpoch(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, errors.New("SOURCE_DATE_EPOCH (or --source-date-epoch) is required, e.g. $(git log -1 --format=%ct)")
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want whole non-negative seconds since 1970", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// readBinaries reads each named file of dir.
func readBinaries(dir string, names []string) ([]Binary, error) {
	out := make([]Binary, 0, len(names))
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("binary %s: %w", n, err)
		}
		out = append(out, Binary{Name: n, Data: data})
	}
	return out, nil
}

// mib converts bytes to MiB.
func mib(n int64) float64 { return float64(n) / (1 << 20) }

// report prints what was built: the image ID (config digest, what docker
// load shows), the manifest digest, the tarball's size and SHA-256, and each
// binary's and other file's size, ending with BENCH lines named after bench
// ("image", "envoy_image") for the tarball and the binaries.
func report(w io.Writer, bench, out string, t name.Tag, img v1.Image, bins []Binary, others []File) error {
	id, err := img.ConfigName()
	if err != nil {
		return fmt.Errorf("image %s: config digest: %w", t, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("image %s: manifest digest: %w", t, err)
	}
	f, err := os.Open(out)
	if err != nil {
		return fmt.Errorf("read back %s: %w", out, err)
	}
	defer func() { _ = f.Close() }() // read-only
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("read back %s: %w", out, err)
	}
	var r strings.Builder
	fmt.Fprintf(&r, "image %s\n", t)
	fmt.Fprintf(&r, "  tarball   %s (%d bytes, sha256:%s)\n", out, size, hex.EncodeToString(h.Sum(nil)))
	fmt.Fprintf(&r, "  image ID  %s\n", id)
	fmt.Fprintf(&r, "  manifest  %s\n", digest)
	for _, b := range bins {
		fmt.Fprintf(&r, "  %-9s %s/%s %.1f MiB\n", "binary", BinDir, b.Name, mib(int64(len(b.Data))))
	}
	for _, f := range others {
		fmt.Fprintf(&r, "  %-9s %s %.2f MiB\n", "file", f.Path, mib(int64(len(f.Data))))
	}
	fmt.Fprintf(&r, "BENCH %s_size_mib %.2f MiB\n", bench, mib(size))
	for _, b := range bins {
		fmt.Fprintf(&r, "BENCH %s_binary_%s_mib %.2f MiB\n", bench, b.Name, mib(int64(len(b.Data))))
	}
	if _, err := io.WriteString(w, r.String()); err != nil {
		return fmt.Errorf("print the report: %w", err)
	}
	return nil
}
