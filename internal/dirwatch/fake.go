package dirwatch

import "github.com/fsnotify/fsnotify"

// Fake is a directory watch a test drives: it delivers only the events and
// errors the test sends (a queue overflow, say). Tests of the tlb, netd
// and l7 config watchers share it.
type Fake struct {
	EventC chan fsnotify.Event
	ErrC   chan error
}

// NewFake returns a Fake with unbuffered channels.
func NewFake() *Fake { return &Fake{EventC: make(chan fsnotify.Event), ErrC: make(chan error)} }

// Events are the events the test sends on EventC.
func (f *Fake) Events() <-chan fsnotify.Event { return f.EventC }

// Errors are the errors the test sends on ErrC.
func (f *Fake) Errors() <-chan error { return f.ErrC }

// Close does nothing.
func (f *Fake) Close() error { return nil }
