package director

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
)

// ProcSys reads and writes sysctls as files under Root (normally
// /proc/sys), in the network namespace of the calling thread. The zero
// value uses /proc/sys.
type ProcSys struct {
	Root string
}

func (p ProcSys) path(name string) (string, error) {
	if name == "" || strings.Contains(name, "..") || filepath.IsAbs(name) {
		return "", fmt.Errorf("sysctl name %q: must be a relative path with no parent (..) element", name)
	}
	root := p.Root
	if root == "" {
		root = "/proc/sys"
	}
	return filepath.Join(root, name), nil
}

// Get returns the value of sysctl name ("net/ipv4/vs/sloppy_tcp").
func (p ProcSys) Get(name string) (string, error) {
	path, err := p.path(name)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read sysctl %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Set writes value to sysctl name.
func (p ProcSys) Set(name, value string) error {
	path, err := p.path(name)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(value+"\n"), 0o644); err != nil {
		return fmt.Errorf("write sysctl %s=%s: %w", name, value, err)
	}
	return nil
}

// NetnsProcSys is ProcSys inside the network namespace at NsPath (e.g.
// /var/run/netns/NAME), for a director running in-process for another
// namespace. Each call runs on a locked OS thread switched into that
// namespace and back.
type NetnsProcSys struct {
	NsPath string
	ProcSys
}

func (p NetnsProcSys) in(fn func() error) error {
	done := make(chan error, 1)
	// A goroutine of its own: if the thread cannot be switched back, it
	// exits still locked and the runtime discards the thread.
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("get current network namespace: %w", err)
			return
		}
		defer func() { _ = orig.Close() }()
		target, err := netns.GetFromPath(p.NsPath)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("open network namespace %s: %w", p.NsPath, err)
			return
		}
		defer func() { _ = target.Close() }()
		if err := netns.Set(target); err != nil {
			done <- fmt.Errorf("enter network namespace %s: %w", p.NsPath, err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			done <- fmt.Errorf("return from network namespace %s: %w", p.NsPath, err)
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

// Get returns the value of sysctl name inside the namespace.
func (p NetnsProcSys) Get(name string) (string, error) {
	var v string
	err := p.in(func() error {
		var err error
		v, err = p.ProcSys.Get(name)
		return err
	})
	return v, err
}

// Set writes value to sysctl name inside the namespace.
func (p NetnsProcSys) Set(name, value string) error {
	return p.in(func() error { return p.ProcSys.Set(name, value) })
}
