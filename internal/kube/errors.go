package kube

import (
	"errors"
	"fmt"
)

// ErrNotBuilt marks an error that stops the whole model from being built
// (for example this director's L4Cluster does not exist). A Source emits
// nothing after such an error, so the last model stays programmed.
var ErrNotBuilt = errors.New("model not built")

// ObjectError is a problem with one API object that was therefore left
// out of the model; the rest of the model is still built.
type ObjectError struct {
	// Kind and Name identify the object ("Service", "team-a/web").
	Kind, Name string
	// Field is the path of the offending field ("status.loadBalancer.ingress[0].ip").
	Field string
	// Reason says what is wrong and what was done about it.
	Reason string
}

// Error renders "Service team-a/web: status.loadBalancer.ingress[0].ip: ...".
func (e *ObjectError) Error() string {
	return fmt.Sprintf("%s %s: %s: %s", e.Kind, e.Name, e.Field, e.Reason)
}

// Blocking reports whether errs hold an error that stops the model from
// being used (one wrapping ErrNotBuilt).
func Blocking(errs []error) bool {
	for _, e := range errs {
		if errors.Is(e, ErrNotBuilt) {
			return true
		}
	}
	return false
}
