package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// runEnvoy is "image envoy": it builds the Envoy image from the binary
// tools/deps.sh unpacked and a C library of the same architecture: the
// build machine's for amd64, the libc6 package of the other architecture
// unpacked under --root otherwise, with --emulator (qemu-user) running the
// binary to read its version.
func runEnvoy(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image envoy", flag.ContinueOnError)
	envoyBin := fs.String("envoy", "", "the official Envoy binary (tools/deps.sh puts it in ~/.cache/tlb-lab/envoy/VERSION/envoy)")
	out := fs.String("out", "", "docker-archive tarball to write")
	tag := fs.String("tag", "", "image name and tag, e.g. ghcr.io/tlbproject/envoy:v1.40.0 (the version must be the binary's)")
	revision := fs.String("revision", "", "commit of this repository that builds the image, for the layer's history")
	libc := fs.String("libc-version", "", "version of the Debian package libc6 the loader and libraries come from, for its label")
	libDirs := fs.String("lib-dirs", defaultLibDirs, "comma-separated directories (below --root) to find shared libraries in")
	notices := fs.String("notices", "", "comma-separated files below --root (licences of the shipped libraries) copied to the same path in the image")
	arch := fs.String("arch", "amd64", "architecture of the binary and libraries: amd64 or arm64")
	root := fs.String("root", "/", "directory holding the loader, the libraries and the notices (an unpacked libc6 of --arch)")
	emulator := fs.String("emulator", "", "command that runs a binary of --arch on this machine (qemu-aarch64-static), for its --version; none for the machine's own")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "creation time and file mtimes, seconds since 1970 (default $SOURCE_DATE_EPOCH)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *envoyBin == "" || *out == "" || *tag == "" || *revision == "" || *libc == "" {
		return errors.New("--envoy, --out, --tag, --revision and --libc-version are required")
	}
	t, created, err := tagAndTime(*tag, *epoch)
	if err != nil {
		return err
	}
	envoy, err := os.ReadFile(*envoyBin)
	if err != nil {
		return fmt.Errorf("the Envoy binary (run tools/deps.sh): %w", err)
	}
	if err := checkExecutable("--envoy "+*envoyBin, envoy, *arch); err != nil {
		return err
	}
	release, err := envoyRelease(*envoyBin, *emulator, *root)
	if err != nil {
		return err
	}
	runtime, err := runtimeFiles(*root, *envoyBin, strings.Split(*libDirs, ","))
	if err != nil {
		return err
	}
	if *notices != "" {
		for _, p := range strings.Split(*notices, ",") {
			f, err := readFile(*root, p)
			if err != nil {
				return fmt.Errorf("notice: %w", err)
			}
			runtime = append(runtime, f)
		}
	}
	img, err := BuildEnvoy(EnvoySpec{Tag: t, Envoy: envoy, Release: release, Runtime: runtime, Libc: *libc, Created: created, Builder: *revision, Arch: *arch})
	if err != nil {
		return err
	}
	if err := writeArchive(*out, t, img); err != nil {
		return err
	}
	return report(stdout, benchName("envoy_image", *arch), *out, t, img, []Binary{{Name: "envoy", Data: envoy}}, runtime)
}

// envoyRelease runs the binary's --version, through emulator (with the
// loader and libraries of root) when it is for another architecture: the
// image is tagged with what the binary says it is, never with what a file
// name says.
func envoyRelease(bin, emulator, root string) (EnvoyRelease, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	if emulator != "" {
		cmd = exec.CommandContext(ctx, emulator, "-L", root, bin, "--version")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return EnvoyRelease{}, fmt.Errorf("%s --version: %w: %s", bin, err, out)
	}
	return ParseEnvoyVersion(string(out))
}
