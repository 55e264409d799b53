package tlscert

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// MaxFileSize bounds a certificate or key file; larger files are refused
// unread. A long chain of RSA certificates stays far below it.
const MaxFileSize = 256 << 10

// ReadFile reads path if, symlinks followed (Kubernetes mounts Secrets and
// ConfigMaps as symlinks), it is a regular file inside one of dirs and no
// larger than MaxFileSize. A named pipe or a device is refused before it
// is opened, and the open does not block, so neither can hang a reload.
func ReadFile(path string, dirs []string) ([]byte, error) {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if !inside(resolved, dirs) {
		return nil, fmt.Errorf("%s is outside the directories certificates are read from (%s)", path, strings.Join(dirs, ", "))
	}
	st, err := os.Stat(resolved)
	if err != nil {
		return nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(resolved, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if st, err = f.Stat(); err != nil { // it may have been replaced since
		return nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxFileSize)
	}
	return b, nil
}

func regular(path string, st os.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	if st.Size() > MaxFileSize {
		return fmt.Errorf("%s is larger than %d bytes", path, MaxFileSize)
	}
	return nil
}

// inside reports whether the resolved path lies under one of dirs (each
// resolved too; a directory that does not exist holds nothing).
func inside(resolved string, dirs []string) bool {
	for _, d := range dirs {
		rd, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(rd, resolved)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			continue
		}
		return true
	}
	return false
}
