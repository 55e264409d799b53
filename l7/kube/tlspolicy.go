package kube

import (
	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/policy"
)

// tlsPolicy reads tlb.io/l7-tls (api.TLSPolicy) and checks it as the
// DSL's listener tls block is checked.
func (a annotations) tlsPolicy(tlsSecret string) *model.TLSPolicy {
	if _, ok := a.ann[api.AnnotationL7TLSPolicy]; !ok {
		return nil
	}
	if tlsSecret == "" {
		a.bad(api.AnnotationL7TLSPolicy, "needs "+api.AnnotationL7TLSSecret+": only an HTTPS listener has a TLS policy")
		return nil
	}
	var in api.TLSPolicy
	if !a.decode(api.AnnotationL7TLSPolicy, `{"minVersion":"1.3"}`, &in) {
		return nil
	}
	p := policy.TLSPolicy(&in)
	if err := model.CheckTLSPolicy(p); err != nil {
		for _, mp := range modelProblems("", "", err) {
			a.bad(api.AnnotationL7TLSPolicy, mp.Field+": "+mp.Msg)
		}
		return nil
	}
	return p
}
