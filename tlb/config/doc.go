// Package config reads the director's YAML configuration file (`tlb run
// --config FILE`) into settings and a model.Desired, strictly: unknown
// fields are errors, and every error names the file and the field. It also
// watches the file (Watcher) and hands each new valid version, and the last
// valid one on every resync tick, to the caller.
//
// It owns only parsing and watching; it does not touch the kernel. The
// `bgp:` and `health:` sections are decoded strictly by the packages that
// own them (bgp.Parse, health.Parse); this package reports their errors
// under the section's name and checks what ties them to the director
// (the announced director.vipRanges must lie inside bgp.allowedPrefixes).
package config
