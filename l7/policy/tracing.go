package policy

import (
	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// Tracing converts a tracing block; nil stays nil. Its values are
// checked by model.CheckGateway.
func Tracing(in *api.Tracing) *model.Tracing {
	if in == nil {
		return nil
	}
	m := &model.Tracing{Collector: in.OTLPEndpoint, SamplePercent: model.DefaultSamplePercent, ServiceName: in.ServiceName}
	if in.SamplePercent != nil {
		m.SamplePercent = *in.SamplePercent
	}
	return m
}
