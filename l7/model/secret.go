package model

import (
	"fmt"
	"log/slog"
)

// redacted is what a PrivateKey prints as, whatever the verb.
const redacted = "[REDACTED]"

// PrivateKey is PEM key material kept in memory. It prints, formats,
// marshals and logs as "[REDACTED]"; only Reveal gives the bytes, for the
// one place that builds the SDS Secret.
type PrivateKey struct{ pem []byte }

// NewPrivateKey wraps PEM key bytes.
func NewPrivateKey(pem []byte) PrivateKey { return PrivateKey{pem: append([]byte(nil), pem...)} }

// Reveal returns the key bytes. Call it only to build the SDS resource.
func (k PrivateKey) Reveal() []byte { return k.pem }

// Empty reports whether no key is held.
func (k PrivateKey) Empty() bool { return len(k.pem) == 0 }

// String redacts the key.
func (k PrivateKey) String() string { return redacted }

// GoString redacts the key for %#v.
func (k PrivateKey) GoString() string { return redacted }

// Format redacts the key for every fmt verb.
func (k PrivateKey) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue redacts the key in slog output.
func (k PrivateKey) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText redacts the key in JSON, YAML and text encodings.
func (k PrivateKey) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Equal reports whether two keys hold the same bytes.
func (k PrivateKey) Equal(o PrivateKey) bool { return string(k.pem) == string(o.pem) }
