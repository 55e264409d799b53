package translate

import (
	"slices"

	"github.com/tlbproject/tlb/l7/model"
)

// clonePassthrough deep-copies a TLS listener's entries.
func clonePassthrough(in []model.SNITarget) []model.SNITarget {
	if in == nil {
		return nil
	}
	out := make([]model.SNITarget, len(in))
	for i, p := range in {
		p.ServerNames, p.Targets = slices.Clone(p.ServerNames), slices.Clone(p.Targets)
		out[i] = p
	}
	return out
}
