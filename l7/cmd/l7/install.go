package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// installName is the file name "l7 install DIR" writes in DIR.
const installName = "l7"

// runInstall handles "l7 install DIR": it copies the running executable to
// DIR/l7. The image has no cp, so the gateway's init container uses this to
// hand the drain wrapper to the Envoy container.
func runInstall(args []string) error {
	if len(args) != 1 || args[0] == "" {
		return errors.New("install: want exactly one argument, the directory to copy l7 into")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("install: find the running executable: %w", err)
	}
	dst, err := install(self, args[0])
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "l7: installed", dst)
	return nil
}

// install copies the file src to dir/l7 with mode 0755, atomically: it writes
// a temporary file in dir and renames it over dir/l7, so a reader never sees
// a half-written binary. It returns the path written.
func install(src, dir string) (dst string, err error) {
	dst = filepath.Join(dir, installName)
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("install %s: open source: %w", dst, err)
	}
	defer func() { _ = in.Close() }() // read-only: nothing to lose on close
	tmp, err := os.CreateTemp(dir, "."+installName+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("install %s: create temporary file in %s: %w", dst, dir, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, in); err != nil {
		return "", fmt.Errorf("install %s: copy %s: %w", dst, src, err)
	}
	if err = tmp.Chmod(0o755); err != nil {
		return "", fmt.Errorf("install %s: set mode 0755: %w", dst, err)
	}
	if err = tmp.Sync(); err != nil {
		return "", fmt.Errorf("install %s: sync: %w", dst, err)
	}
	if err = tmp.Close(); err != nil {
		return "", fmt.Errorf("install %s: close: %w", dst, err)
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return "", fmt.Errorf("install %s: rename into place: %w", dst, err)
	}
	return dst, nil
}
