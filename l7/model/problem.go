package model

import "fmt"

// Problem is an error found on one object. It names the object, where it
// came from and the field at fault.
type Problem struct {
	Kind   string // "service", "gateway" or "certificate"
	Name   string
	Origin Origin
	Field  string
	Msg    string
	// Rejected is true when the object was left out of the served config;
	// false when the object is kept and the problem is only reported on it
	// (the winning side of a conflict).
	Rejected bool
}

// Error formats the problem as "origin: kind name: field: message".
func (p Problem) Error() string {
	s := fmt.Sprintf("%s %q: %s: %s", p.Kind, p.Name, p.Field, p.Msg)
	if p.Origin != "" {
		s = string(p.Origin) + ": " + s
	}
	if !p.Rejected {
		s += " (kept)"
	}
	return s
}
