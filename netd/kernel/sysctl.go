package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ProcSys reads and writes sysctls as files under a /proc/sys root. The
// net.* keys it sees belong to the network namespace of the calling
// process.
type ProcSys struct {
	// Root is the directory holding the keys, normally /proc/sys.
	Root string
}

func (p ProcSys) path(key string) (string, error) {
	if key == "" || filepath.IsAbs(key) || strings.Contains(key, "..") || strings.ContainsRune(key, 0) {
		return "", fmt.Errorf("sysctl key %q is not a relative path under %s", key, p.Root)
	}
	return filepath.Join(p.Root, key), nil
}

// Get returns the value of key, without its trailing newline.
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

// Set writes value to key. It only writes keys that already exist.
func (p ProcSys) Set(key, value string) error {
	path, err := p.path(key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("open sysctl %s: %w", key, err)
	}
	if _, err := f.WriteString(value + "\n"); err != nil {
		_ = f.Close()
		return fmt.Errorf("write sysctl %s=%s: %w", key, value, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write sysctl %s=%s: %w", key, value, err)
	}
	return nil
}
