package kube

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tlbproject/tlb/l7/model"
)

// AnnotationTLSPolicy is the TLS policy of the HTTPS listener on the
// Service's VIP (DSL listener tls) as JSON with the DSL's keys, e.g.
// `{"minVersion":"1.3"}` or `{"cipherSuites":["ECDHE-ECDSA-AES128-GCM-SHA256"]}`;
// only with tlb.io/l7-tls-secret. Without it the listener has the
// defaults (TLS 1.2 to 1.3, ECDHE with AEAD).
const AnnotationTLSPolicy = "tlb.io/l7-tls"

// parseTLSPolicy reads tlb.io/l7-tls strictly (unknown keys are errors)
// and checks it as the DSL's listener tls block is checked.
func parseTLSPolicy(ann map[string]string, tlsSecret string, bad func(annotation, msg string)) *model.TLSPolicy {
	v, ok := ann[AnnotationTLSPolicy]
	if !ok {
		return nil
	}
	if tlsSecret == "" {
		bad(AnnotationTLSPolicy, "needs "+AnnotationTLSSecret+": only an HTTPS listener has a TLS policy")
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.DisallowUnknownFields()
	var a struct {
		MinVersion   string   `json:"minVersion"`
		CipherSuites []string `json:"cipherSuites"`
	}
	if err := dec.Decode(&a); err != nil {
		bad(AnnotationTLSPolicy, fmt.Sprintf("%q: %v; want JSON such as {\"minVersion\":\"1.3\"}", v, err))
		return nil
	}
	p := &model.TLSPolicy{MinVersion: a.MinVersion, CipherSuites: a.CipherSuites}
	if err := model.CheckTLSPolicy(p); err != nil {
		for _, mp := range modelProblems("", "", err) {
			bad(AnnotationTLSPolicy, mp.Field+": "+mp.Msg)
		}
		return nil
	}
	return p
}
