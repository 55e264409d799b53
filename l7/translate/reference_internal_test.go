package translate

import (
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

// TestReferenceConfigHasNoProblems: the reference config is served whole;
// a refused object would drop its features from the generation hash
// without anyone noticing.
func TestReferenceConfigHasNoProblems(t *testing.T) {
	if r := model.Resolve(referenceConfig(), model.Options{}); len(r.Problems) > 0 {
		t.Fatalf("the reference config has problems: %v", r.Problems)
	}
}
