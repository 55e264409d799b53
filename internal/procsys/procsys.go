// Package procsys reads and writes kernel parameters (sysctls) as files
// under a /proc/sys directory. The director and netd share it.
//
// In a container /proc/sys is mounted read-only (containerd's default
// ReadonlyPaths), even with NET_ADMIN, and runc refuses mounts inside
// /proc; so the pods mount the host's /proc/sys/net elsewhere
// (/host/proc/sys/net) and pass that root. The net.* keys always belong
// to the network namespace of the calling thread, wherever they are
// mounted.
package procsys

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// DefaultRoot is where the kernel's sysctls are outside a container.
const DefaultRoot = "/proc/sys"

// ProcSys reads and writes sysctls under Root. The zero value uses
// DefaultRoot.
type ProcSys struct {
	Root string
}

func (p ProcSys) root() string {
	if p.Root == "" {
		return DefaultRoot
	}
	return p.Root
}

func (p ProcSys) path(key string) (string, error) {
	if key == "" || filepath.IsAbs(key) || strings.Contains(key, "..") || strings.ContainsRune(key, 0) {
		return "", fmt.Errorf("sysctl key %q is not a relative path under %s", key, p.root())
	}
	return filepath.Join(p.root(), key), nil
}

// Get returns the value of key ("net/ipv4/vs/sloppy_tcp") without its
// trailing newline.
func (p ProcSys) Get(key string) (string, error) {
	path, err := p.path(key)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read sysctl %s: %w", key, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Set writes value to key. It only writes keys that exist; a read-only
// mount is reported with what to do about it.
func (p ProcSys) Set(key, value string) error {
	path, err := p.path(key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return p.writeErr(key, value, err)
	}
	if _, err := f.WriteString(value + "\n"); err != nil {
		_ = f.Close()
		return p.writeErr(key, value, err)
	}
	if err := f.Close(); err != nil {
		return p.writeErr(key, value, err)
	}
	return nil
}

func (p ProcSys) writeErr(key, value string, err error) error {
	if errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("write sysctl %s=%s: %w (%s is mounted read-only, as in every container: mount the host's /proc/sys/net at /host/proc/sys/net and pass --sysctl-dir=/host/proc/sys)",
			key, value, err, p.root())
	}
	return fmt.Errorf("write sysctl %s=%s: %w", key, value, err)
}
