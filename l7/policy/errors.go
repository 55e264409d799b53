package policy

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// FieldError is one invalid field of a gateway function.
type FieldError struct {
	// Field is the path from the function's root, e.g. "local.burst";
	// empty for the function as a whole.
	Field string
	Msg   string
}

// Error formats the error as "field: message".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Errors is every invalid field of one conversion, in the order of the
// schema's fields.
type Errors []*FieldError

// Error joins the fields' errors with "; ".
func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// Fields returns the field errors of err: those of an Errors or a
// FieldError it wraps or joins, else one with no field and err's text.
func Fields(err error) []*FieldError {
	if err == nil {
		return nil
	}
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return []*FieldError{fe}
	}
	return []*FieldError{{Msg: err.Error()}}
}

// Path joins a front end's path and a field's: "routes[0].cors" and
// "maxAge" give "routes[0].cors.maxAge"; an index ("[1].x") needs no dot.
func Path(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	case strings.HasPrefix(field, "["):
		return prefix + field
	}
	return prefix + "." + field
}

// add records that field is invalid.
func (es *Errors) add(field, format string, args ...any) {
	*es = append(*es, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
}

// nest records the errors of a conversion of the field at prefix.
func (es *Errors) nest(prefix string, err error) {
	for _, e := range Fields(err) {
		*es = append(*es, &FieldError{Field: Path(prefix, e.Field), Msg: e.Msg})
	}
}

// err is es as an error; nil when there are none.
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// positive reads a positive duration; example is one in the message.
// Empty is zero.
func (es *Errors) positive(field, v, example string) time.Duration {
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		es.add(field, "want a positive duration such as %q, got %q", example, v)
		return 0
	}
	return d
}

// positivePtr is positive for an optional field: nil is zero, and so is
// an invalid value, reported.
func (es *Errors) positivePtr(field string, v *string, example string) time.Duration {
	if v == nil {
		return 0
	}
	if *v == "" {
		es.add(field, "want a positive duration such as %q, got %q", example, *v)
		return 0
	}
	return es.positive(field, *v, example)
}

// Off is a duration written "off": a timeout or window turned off.
const Off time.Duration = -1

// orOff reads a positive duration or "off" (Off); nil is zero.
func (es *Errors) orOff(field string, v *string) time.Duration {
	if v == nil {
		return 0
	}
	if strings.EqualFold(*v, "off") {
		return Off
	}
	d, err := time.ParseDuration(*v)
	if err != nil || d <= 0 {
		es.add(field, "want a positive duration such as \"1m\" or \"off\", got %q", *v)
		return 0
	}
	return d
}
