// Package cli registers the flags every TLB binary shares, so that each
// one spells them the same way: --log-format and --log-level, --version,
// and for the binaries that talk to Kubernetes --kubeconfig, --in-cluster,
// --kube-api-qps and --kube-api-burst (Kube), and leader election
// (internal/leader.Flags). docs/flags.md documents them once.
//
// It only parses flags and builds the logger; mains wire the rest. It
// belongs to no role and imports none.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/tlbproject/tlb/internal/buildinfo"
)

// Log formats of --log-format.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Common are the flags of every binary: the logger's format and level,
// and --version. Register them with Register; after parsing, call
// Version, then Logger.
type Common struct {
	binary string
	extra  []any
	format string
	level  slog.Level
	print  bool
}

// Register adds --log-format (default format: each binary keeps the one
// it always had), --log-level and --version to fs. binary names the build
// --version prints; extra is printed after it (l7 adds its schema
// generation).
func Register(fs *flag.FlagSet, binary, format string, extra ...any) *Common {
	c := &Common{binary: binary, extra: extra, format: format}
	fs.Func("log-format", fmt.Sprintf("log format: text or json (default %s)", format), func(v string) error {
		if v != FormatText && v != FormatJSON {
			return errors.New("--log-format takes text or json")
		}
		c.format = v
		return nil
	})
	fs.Func("log-level", "log level: debug, info, warn or error (default info)", func(v string) error {
		if err := c.level.UnmarshalText([]byte(v)); err != nil {
			return errors.New("--log-level takes debug, info, warn or error")
		}
		return nil
	})
	fs.BoolVar(&c.print, "version", false, "print the build and exit")
	return c
}

// SetLevel sets the log level as --log-level does (for a binary's older
// flag that says the same, such as netd's --debug).
func (c *Common) SetLevel(l slog.Level) { c.level = l }

// Version prints the build to w when --version was given, and reports
// whether it did (the caller then exits 0).
func (c *Common) Version(w io.Writer) bool {
	if !c.print {
		return false
	}
	_, _ = fmt.Fprintln(w, append([]any{buildinfo.Read(c.binary)}, c.extra...)...)
	return true
}

// Logger returns the logger of --log-format and --log-level, writing to w.
func (c *Common) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.level}
	if c.format == FormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
