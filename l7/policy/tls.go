package policy

import (
	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// TLSPolicy converts a listener's tls block; nil stays nil. Its values
// are checked by model.CheckTLSPolicy (with the gateway).
func TLSPolicy(in *api.TLSPolicy) *model.TLSPolicy {
	if in == nil {
		return nil
	}
	return &model.TLSPolicy{MinVersion: string(in.MinVersion), CipherSuites: in.CipherSuites}
}
