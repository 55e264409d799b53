package bgp

import "errors"

// ErrNotAllowed is wrapped by Announce's error when a prefix lies outside
// the allowed VIP ranges. Nothing is changed when it is returned.
var ErrNotAllowed = errors.New("prefix not in the allowed VIP ranges")

// ErrNotStarted is returned by calls that need a started Speaker.
var ErrNotStarted = errors.New("bgp speaker not started")
