package main

import (
	"bytes"
	"debug/elf"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// platform is the OCI platform of an image built for the Go architecture
// arch: linux, with the variant registries and containerd expect for arm64.
func platform(arch string) (v1.Platform, error) {
	switch arch {
	case "amd64":
		return v1.Platform{OS: "linux", Architecture: "amd64"}, nil
	case "arm64":
		return v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, nil
	}
	return v1.Platform{}, fmt.Errorf("architecture %q: the images are built for amd64 and arm64", arch)
}

// elfMachine is the ELF machine of executables for the Go architecture arch.
func elfMachine(arch string) (elf.Machine, error) {
	switch arch {
	case "amd64":
		return elf.EM_X86_64, nil
	case "arm64":
		return elf.EM_AARCH64, nil
	}
	return 0, fmt.Errorf("architecture %q: the images are built for amd64 and arm64", arch)
}

// checkExecutable fails unless data is a 64-bit little-endian ELF
// executable for arch: an image for one architecture never carries a
// binary built for another.
func checkExecutable(name string, data []byte, arch string) error {
	want, err := elfMachine(arch)
	if err != nil {
		return err
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: not an ELF executable: %w", name, err)
	}
	defer func() { _ = f.Close() }() // a reader over bytes: nothing to release
	if f.Machine != want || f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return fmt.Errorf("%s: an ELF for %s (%s, %s), not for %s", name, f.Machine, f.Class, f.Data, arch)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s: ELF type %s, not an executable", name, f.Type)
	}
	return nil
}

// benchName is the prefix of an image's BENCH lines: base for amd64 (the
// names the figures always had), base_ARCH for the others.
func benchName(base, arch string) string {
	if arch == "amd64" {
		return base
	}
	return base + "_" + arch
}
