package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tlbproject/tlb/l7/model"
)

// corsAnnotation is tlb.io/l7-cors: the DSL's cors keys, as JSON.
type corsAnnotation struct {
	AllowOrigins     []string `json:"allowOrigins"`
	AllowMethods     []string `json:"allowMethods"`
	AllowHeaders     []string `json:"allowHeaders"`
	ExposeHeaders    []string `json:"exposeHeaders"`
	AllowCredentials bool     `json:"allowCredentials"`
	MaxAge           string   `json:"maxAge"`
}

// parseCORS reads tlb.io/l7-cors strictly (unknown keys are errors); the
// values are checked with the service (model.CheckService).
func parseCORS(v string) (*model.CORSPolicy, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.DisallowUnknownFields()
	var a corsAnnotation
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%q: %w; want JSON such as {\"allowOrigins\":[\"https://app.example.com\"],\"allowMethods\":[\"GET\"]}", v, err)
	}
	p := &model.CORSPolicy{Origins: a.AllowOrigins, Methods: a.AllowMethods, Headers: a.AllowHeaders,
		ExposeHeaders: a.ExposeHeaders, Credentials: a.AllowCredentials}
	if a.MaxAge != "" {
		d, err := time.ParseDuration(a.MaxAge)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("maxAge: want a positive duration such as \"10m\", got %q", a.MaxAge)
		}
		p.MaxAge = d
	}
	return p, nil
}
