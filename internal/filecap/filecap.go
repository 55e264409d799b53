// Package filecap reads files that come from outside a program (config
// files an operator or another process writes) under a size cap, so that an
// oversized file is refused before it is parsed and without being read
// whole. It is shared by the roles (tlb, netd) and owns no state: each
// caller passes its own cap.
package filecap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// TooLargeError says a file is over its size cap.
type TooLargeError struct {
	// Path names the file.
	Path string
	// Size is the file's size in bytes, or a lower bound (Cap+1) when it
	// could not be known without reading the file whole.
	Size int64
	// Cap is the largest size accepted, in bytes.
	Cap int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %d bytes is over the %s size cap; refused before parsing", e.Path, e.Size, Human(e.Cap))
}

// Check returns a *TooLargeError when size is over limit.
func Check(path string, size, limit int64) error {
	if size > limit {
		return &TooLargeError{Path: path, Size: size, Cap: limit}
	}
	return nil
}

// Read reads the regular file at path (symbolic links followed, as in a
// mounted ConfigMap), or returns a *TooLargeError without reading more
// than limit+1 bytes when it is larger than limit. Anything else (a FIFO,
// a device such as /dev/zero, a directory) is refused without a read: the
// file is opened non-blocking, so a FIFO with no writer cannot hang the
// caller.
func Read(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s); refused without reading", path, fi.Mode().Type())
	}
	if err := Check(path, fi.Size(), limit); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Size: int64(len(data)), Cap: limit}
	}
	return data, nil
}

// IsTooLarge reports whether err is or wraps a *TooLargeError.
func IsTooLarge(err error) bool {
	var e *TooLargeError
	return errors.As(err, &e)
}

// Human writes n bytes as "4 MiB", "512 KiB" or "100 bytes" (exact
// multiples only; anything else in bytes).
func Human(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
