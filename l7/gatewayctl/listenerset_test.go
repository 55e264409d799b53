package gatewayctl

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// TestPlanListenerSets: a set Build gave a status gets it written, with
// the transition times of unchanged conditions kept; a set Build said
// nothing of (another controller's Gateway) is left alone; once written,
// nothing is planned again.
func TestPlanListenerSets(t *testing.T) {
	then, now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), metav1.NewTime(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	ours := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "ours"}}
	ours.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: then}}
	theirs := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "theirs"}}
	in := gatewayapi.Inputs{ListenerSets: []*gatewayv1.ListenerSet{ours, theirs}}
	want := gatewayapi.Status{ListenerSets: map[types.NamespacedName]gatewayv1.ListenerSetStatus{
		{Namespace: "a", Name: "ours"}: {
			Conditions: []metav1.Condition{
				{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: now},
				{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed", LastTransitionTime: now},
			},
			Listeners: []gatewayv1.ListenerEntryStatus{{Name: "l", AttachedRoutes: 2}},
		},
	}}
	none := func(string, metav1.Object) bool { return false }
	w := planListenerSets(in, want, none)
	if len(w) != 1 || w[0].Name != "ours" {
		t.Fatalf("writes %v; want a/ours alone", w)
	}
	st := w[0].Status
	if len(st.Conditions) != 2 || !st.Conditions[0].LastTransitionTime.Equal(&then) || !st.Conditions[1].LastTransitionTime.Equal(&now) {
		t.Errorf("conditions %+v; want Accepted's transition kept, Programmed's new", st.Conditions)
	}
	if len(st.Listeners) != 1 || st.Listeners[0].AttachedRoutes != 2 {
		t.Errorf("listeners %+v; want l with 2 routes", st.Listeners)
	}
	in.ListenerSets[0] = w[0]
	if again := planListenerSets(in, want, none); len(again) != 0 {
		t.Errorf("unchanged status planned again: %v", again)
	}
	if w := planListenerSets(gatewayapi.Inputs{ListenerSets: []*gatewayv1.ListenerSet{ours}}, want, func(string, metav1.Object) bool { return true }); len(w) != 0 {
		t.Errorf("a set with a write in flight planned again")
	}
}
