package gatewayctl

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// TestRecheckBacksOff: the IPAM's reason for a refused address used to
// reach the Gateway only at the next 15 s look; the first look after a
// Gateway starts waiting comes after 0.5 s, the next ones twice as late
// each time up to the maximum, and a Gateway that starts waiting starts
// over.
func TestRecheckBacksOff(t *testing.T) {
	r := &recheck{max: 3 * time.Second}
	a := types.NamespacedName{Namespace: "a", Name: "web"}
	b := types.NamespacedName{Namespace: "a", Name: "shop"}
	var got []time.Duration
	for range 5 {
		got = append(got, r.next([]types.NamespacedName{a}))
	}
	got = append(got, r.next([]types.NamespacedName{b, a}))
	r.reset()
	got = append(got, r.next([]types.NamespacedName{b, a}))
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second,
		500 * time.Millisecond, 500 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Errorf("delays %v; want %v", got, want)
	}
}
