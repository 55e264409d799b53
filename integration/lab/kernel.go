package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Kernel is an unpacked Debian kernel package in the lab cache.
type Kernel struct {
	Root    string // the unpacked package (holds boot/ and lib/modules/)
	Version string // e.g. 6.1.0-57-amd64
}

// Image is the path of the bootable kernel image.
func (k Kernel) Image() string { return filepath.Join(k.Root, "boot", "vmlinuz-"+k.Version) }

// ModulesDir is the directory bind-mounted on /lib/modules inside the VM.
func (k Kernel) ModulesDir() string { return filepath.Join(k.Root, "lib", "modules") }

// CacheDir returns the lab cache: $TLB_LAB_CACHE or ~/.cache/tlb-lab.
func CacheDir() string {
	if d := os.Getenv("TLB_LAB_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "/root"
	}
	return filepath.Join(home, ".cache", "tlb-lab")
}

// FindKernel returns the kernel that tools/deps.sh unpacked into cacheDir.
func FindKernel(cacheDir string) (Kernel, error) {
	dir := filepath.Join(cacheDir, "kernel")
	if _, err := os.Stat(filepath.Join(dir, "ready")); err != nil {
		return Kernel{}, fmt.Errorf("no lab kernel in %s: run tools/deps.sh (make deps) first", dir)
	}
	v, err := os.ReadFile(filepath.Join(dir, "version"))
	if err != nil {
		return Kernel{}, fmt.Errorf("read lab kernel version: %w", err)
	}
	k := Kernel{Root: filepath.Join(dir, "root"), Version: strings.TrimSpace(string(v))}
	if _, err := os.Stat(k.Image()); err != nil {
		return Kernel{}, fmt.Errorf("lab kernel image: %w", err)
	}
	return k, nil
}
