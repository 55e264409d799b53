package dsl

import (
	"fmt"
	"strings"

	"github.com/tlbproject/tlb/l7/model"
)

// The edge basics of a service and a route: access log and canary
// blocks (a gateway's tracing is api.Tracing, converted by l7/policy).
// model.CheckService and model.CheckGateway validate the values; here
// only their shape is read.

type canaryDoc struct {
	Upstream string          `json:"upstream"`
	Header   *canaryMatchDoc `json:"header,omitempty"`
	Cookie   *canaryMatchDoc `json:"cookie,omitempty"`
	Percent  *int            `json:"percent,omitempty"`
}

type canaryMatchDoc struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// accessLogOff reads a service's accessLog: "on" (the default) or "off".
func accessLogOff(v *string, file string, errs *[]error) bool {
	if v == nil {
		return false
	}
	switch strings.ToLower(*v) {
	case "on":
		return false
	case "off":
		return true
	}
	*errs = append(*errs, &FieldError{File: file, Field: "accessLog", Msg: fmt.Sprintf("want \"on\" or \"off\", got %q", *v)})
	return false
}

func (c *canaryDoc) toModel(field, file string, errs *[]error) *model.Canary {
	if c == nil {
		return nil
	}
	m := &model.Canary{Upstream: c.Upstream}
	if c.Header != nil {
		m.Header = &model.CanaryMatch{Name: c.Header.Name, Value: c.Header.Value}
	}
	if c.Cookie != nil {
		m.Cookie = &model.CanaryMatch{Name: c.Cookie.Name, Value: c.Cookie.Value}
	}
	if c.Percent != nil {
		if *c.Percent < 0 || *c.Percent > 100 {
			*errs = append(*errs, &FieldError{File: file, Field: field + ".percent", Msg: fmt.Sprintf("want 0..100, got %d", *c.Percent)})
		} else {
			m.Percent = uint32(*c.Percent)
		}
	}
	return m
}
