package kube

import "log/slog"

// ObjectErrorLog logs the object errors of each model build, each one once
// while it persists: an error logged by one build is logged again only
// after a build without it. The zero value is not usable; set Log and
// Message.
type ObjectErrorLog struct {
	// Log receives one Warn per new error, with the error under "err".
	Log *slog.Logger
	// Message is the log message, e.g. "API object left out of the
	// director model".
	Message string

	last map[string]bool
}

// Report logs the errors of errs not reported by the previous call.
func (l *ObjectErrorLog) Report(errs []error) {
	now := make(map[string]bool, len(errs))
	for _, e := range errs {
		msg := e.Error()
		now[msg] = true
		if !l.last[msg] {
			l.Log.Warn(l.Message, "err", msg)
		}
	}
	l.last = now
}
