// Package config reads the director's YAML configuration file (`tlb run
// --config FILE`) into settings and a model.Desired, strictly: unknown
// fields are errors, and every error names the file and the field. It also
// watches the file (Watcher) and hands each new valid version, and the last
// valid one on every resync tick, to the caller.
//
// It owns only parsing and watching; it does not touch the kernel. The
// `bgp:` and `health:` sections are kept as raw JSON for the packages that
// own them to decode strictly.
package config
