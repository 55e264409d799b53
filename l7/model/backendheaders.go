package model

import "fmt"

// Header edits per target (WeightedTarget.Headers): Gateway API's
// backendRefs[].filters of type RequestHeaderModifier and
// ResponseHeaderModifier, applied to the requests that go to that
// backend only.

func (t *WeightedTarget) equal(o *WeightedTarget) bool {
	return t.Upstream == o.Upstream && t.Weight == o.Weight && samePtrFunc(t.Headers, o.Headers, (*HeaderRules).equal)
}

// cloneTargets deep-copies a route's targets.
func cloneTargets(in []WeightedTarget) []WeightedTarget {
	return cloneSliceFunc(in, func(t WeightedTarget) WeightedTarget {
		t.Headers = clonePtrFunc(t.Headers, HeaderRules.clone)
		return t
	})
}

// checkTargetHeaders adds the field errors of the header edits of a
// route's targets.
func checkTargetHeaders(r Route, f string, bad func(field, format string, a ...any)) {
	for j, t := range r.Targets {
		if t.Headers != nil {
			checkHeaderRules(t.Headers, fmt.Sprintf("%s.targets[%d].", f, j), bad)
		}
	}
}
