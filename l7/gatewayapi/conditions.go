package gatewayapi

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// condition returns a condition of an object at generation gen.
func condition[T, R ~string](typ T, ok bool, reason R, msg string, gen int64, now time.Time) metav1.Condition {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	return metav1.Condition{
		Type: string(typ), Status: s, Reason: string(reason), Message: msg,
		ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(now),
	}
}

// MergeConditions returns next with the LastTransitionTime of prev kept
// for every condition whose type, status and reason did not change, so
// that a rebuild that changes nothing writes the same status (and the
// controller writes none). Conditions only in prev are dropped.
func MergeConditions(prev, next []metav1.Condition) []metav1.Condition {
	if next == nil {
		return nil
	}
	out := make([]metav1.Condition, len(next))
	for i, c := range next {
		for _, p := range prev {
			if p.Type == c.Type && p.Status == c.Status && p.Reason == c.Reason {
				c.LastTransitionTime = p.LastTransitionTime
			}
		}
		out[i] = c
	}
	return out
}
