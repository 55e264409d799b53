package bgp

import (
	"context"
	"log/slog"
	"strings"

	gobgplog "github.com/osrg/gobgp/v3/pkg/log"
)

// gobgpLogger adapts slog to GoBGP's logger interface. Fatal and Panic are
// logged as errors and never end the process: a library must not exit the
// director. Fields whose name mentions a password or auth are dropped.
type gobgpLogger struct {
	log   *slog.Logger
	level gobgplog.LogLevel
}

func newGobgpLogger(l *slog.Logger) *gobgpLogger {
	return &gobgpLogger{log: l.With("component", "gobgp"), level: gobgplog.InfoLevel}
}

func (g *gobgpLogger) emit(lvl slog.Level, msg string, fields gobgplog.Fields) {
	if !g.log.Enabled(context.Background(), lvl) {
		return
	}
	attrs := make([]any, 0, 2*len(fields))
	for k, v := range fields {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "password") || strings.Contains(lk, "auth") {
			continue
		}
		attrs = append(attrs, k, v)
	}
	g.log.Log(context.Background(), lvl, msg, attrs...)
}

// Panic, Fatal and Error log at error level; none of them exits or panics.
func (g *gobgpLogger) Panic(msg string, f gobgplog.Fields) { g.emit(slog.LevelError, msg, f) }
func (g *gobgpLogger) Fatal(msg string, f gobgplog.Fields) { g.emit(slog.LevelError, msg, f) }
func (g *gobgpLogger) Error(msg string, f gobgplog.Fields) { g.emit(slog.LevelError, msg, f) }

// Warn logs at warn level.
func (g *gobgpLogger) Warn(msg string, f gobgplog.Fields) { g.emit(slog.LevelWarn, msg, f) }

// Info is demoted to Debug: GoBGP logs every FSM step at Info.
func (g *gobgpLogger) Info(msg string, f gobgplog.Fields) { g.emit(slog.LevelDebug, msg, f) }

// Debug logs below slog's debug level: GoBGP's debug output is very chatty.
func (g *gobgpLogger) Debug(msg string, f gobgplog.Fields) { g.emit(slog.LevelDebug-4, msg, f) }

// SetLevel and GetLevel keep GoBGP's idea of the level; slog's handler filters.
func (g *gobgpLogger) SetLevel(l gobgplog.LogLevel) { g.level = l }
func (g *gobgpLogger) GetLevel() gobgplog.LogLevel  { return g.level }
