package bgp

import "log/slog"

// maxPasswordBytes is the longest TCP MD5 key (RFC 2385) Linux accepts.
const maxPasswordBytes = 80

// Password is a TCP MD5 password held in memory, as a BGPPeer's read from
// its Secret. It prints and logs as "[redacted]" and is never marshalled,
// so a PeerConfig can be logged or compared without leaking it.
type Password string

// String hides the password from fmt's %v and %s.
func (Password) String() string { return "[redacted]" }

// GoString hides the password from fmt's %#v.
func (Password) GoString() string { return `"[redacted]"` }

// LogValue hides the password from log/slog.
func (Password) LogValue() slog.Value { return slog.StringValue("[redacted]") }
