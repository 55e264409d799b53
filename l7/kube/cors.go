package kube

import (
	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/policy"
)

// cors reads tlb.io/l7-cors (api.CORS); the values are checked with the
// service (model.CheckService).
func (a annotations) cors() *model.CORSPolicy {
	var in api.CORS
	if !a.decode(api.AnnotationL7CORS, `{"allowOrigins":["https://app.example.com"],"allowMethods":["GET"]}`, &in) {
		return nil
	}
	p, err := policy.CORS(&in)
	if !a.policyErrs(api.AnnotationL7CORS, "", err) {
		return nil
	}
	return p
}
