package director

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"

	"github.com/tlbproject/tlb/internal/procsys"
)

// ProcSys reads and writes sysctls under a /proc/sys root, in the network
// namespace of the calling thread (internal/procsys). The zero value uses
// /proc/sys.
type ProcSys = procsys.ProcSys

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
