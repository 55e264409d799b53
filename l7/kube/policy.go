package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tlbproject/tlb/l7/policy"
)

// annotations reads a Service's annotations and reports each invalid one.
type annotations struct {
	ann map[string]string
	bad func(annotation, msg string)
}

// decode reads annotation strictly (unknown keys and trailing data are
// errors) into v, one of the gateway functions' schema types (package
// api); false when the annotation is absent or invalid (reported, with
// example, JSON that is valid).
func (a annotations) decode(annotation, example string, v any) bool {
	raw, ok := a.ann[annotation]
	if !ok {
		return false
	}
	if err := decodeStrict(raw, v); err != nil {
		a.bad(annotation, fmt.Sprintf("%q: %v; want JSON such as %s", raw, err, example))
		return false
	}
	return true
}

// policyErrs reports the field errors of a gateway function's conversion
// (l7/policy) on annotation, under path ("hsts").
func (a annotations) policyErrs(annotation, path string, err error) bool {
	fs := policy.Fields(err)
	for _, fe := range fs {
		a.bad(annotation, (&policy.FieldError{Field: policy.Path(path, fe.Field), Msg: fe.Msg}).Error())
	}
	return len(fs) == 0
}

// decodeStrict decodes one JSON value into v, refusing unknown keys and
// trailing data; the error says where.
func decodeStrict(data string, v any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}
