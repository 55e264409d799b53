package kube

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// parseTLSPolicy reads tlb.io/l7-tls strictly (unknown keys are errors)
// and checks it as the DSL's listener tls block is checked.
func parseTLSPolicy(ann map[string]string, tlsSecret string, bad func(annotation, msg string)) *model.TLSPolicy {
	v, ok := ann[api.AnnotationL7TLSPolicy]
	if !ok {
		return nil
	}
	if tlsSecret == "" {
		bad(api.AnnotationL7TLSPolicy, "needs "+api.AnnotationL7TLSSecret+": only an HTTPS listener has a TLS policy")
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.DisallowUnknownFields()
	var a struct {
		MinVersion   string   `json:"minVersion"`
		CipherSuites []string `json:"cipherSuites"`
	}
	if err := dec.Decode(&a); err != nil {
		bad(api.AnnotationL7TLSPolicy, fmt.Sprintf("%q: %v; want JSON such as {\"minVersion\":\"1.3\"}", v, err))
		return nil
	}
	p := &model.TLSPolicy{MinVersion: a.MinVersion, CipherSuites: a.CipherSuites}
	if err := model.CheckTLSPolicy(p); err != nil {
		for _, mp := range modelProblems("", "", err) {
			bad(api.AnnotationL7TLSPolicy, mp.Field+": "+mp.Msg)
		}
		return nil
	}
	return p
}
