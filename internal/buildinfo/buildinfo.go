// Package buildinfo says which build a binary is, from what the Go
// toolchain stamps into it: the module version (from the repository's tag,
// or a pseudo-version naming the commit), the commit and its time, whether
// the work tree had changes, the Go version and the platform. Every TLB
// binary prints it for --version. It reads only the running binary.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Info describes one build.
type Info struct {
	// Binary is the program's name (tlb, netd, ipam, l7).
	Binary string
	// Version is the main module's version: a tag such as v0.2.0, a
	// pseudo-version, or "(devel)" when Go stamped none.
	Version string
	// Commit and Time are the VCS revision and its commit time, when known.
	Commit, Time string
	// Modified says the work tree had uncommitted changes.
	Modified bool
	// Go and Platform are the toolchain version and GOOS/GOARCH.
	Go, Platform string
}

// Read returns the running binary's build information.
func Read(binary string) Info {
	i := Info{Binary: binary, Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return i
	}
	if v := bi.Main.Version; v != "" {
		i.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.time":
			i.Time = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	return i
}

// String is the one line --version prints, e.g.
// "tlb v0.2.0 commit 1a2b3c4d5e6f (2026-12-02T10:00:00Z) go1.26.8 linux/amd64".
func (i Info) String() string {
	s := i.Binary + " " + i.Version
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " commit " + c
		if i.Modified {
			s += "-dirty"
		}
		if i.Time != "" {
			s += " (" + i.Time + ")"
		}
	}
	return fmt.Sprintf("%s %s %s", s, i.Go, i.Platform)
}
