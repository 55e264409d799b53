package gatewayapi

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

func TestGatewayClassStatus(t *testing.T) {
	for name, tc := range map[string]struct {
		edit       func(*gatewayv1.GatewayClass)
		wantStatus bool
		wantReason gatewayv1.GatewayClassConditionReason
		wantGroup  string
	}{
		"parameters found":         {func(*gatewayv1.GatewayClass) {}, true, gatewayv1.GatewayClassReasonAccepted, "edge"},
		"no parameters is default": {func(c *gatewayv1.GatewayClass) { c.Spec.ParametersRef = nil }, true, gatewayv1.GatewayClassReasonAccepted, "default"},
		"parameters of another kind": {func(c *gatewayv1.GatewayClass) { c.Spec.ParametersRef.Kind = "ConfigMap" },
			false, gatewayv1.GatewayClassReasonInvalidParameters, ""},
		"parameters of another group": {func(c *gatewayv1.GatewayClass) { c.Spec.ParametersRef.Group = "example.com" },
			false, gatewayv1.GatewayClassReasonInvalidParameters, ""},
		"parameters not found": {func(c *gatewayv1.GatewayClass) { c.Spec.ParametersRef.Name = "missing" },
			false, gatewayv1.GatewayClassReasonInvalidParameters, ""},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			tc.edit(in.Classes[0])
			res := Build(in)
			st, ok := res.Status.GatewayClasses["tlb"]
			if !ok {
				t.Fatal("no status for class tlb")
			}
			c := cond(t, st.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted))
			wantCond(t, st.Conditions, c.Type, tc.wantStatus, string(tc.wantReason))
			if c.ObservedGeneration != 2 || !c.LastTransitionTime.Time.Equal(testNow) {
				t.Fatalf("condition %+v: want observedGeneration 2 and transition at %v", c, testNow)
			}
			if len(st.SupportedFeatures) != len(SupportedFeatures()) {
				t.Fatalf("supportedFeatures %v; want %v", st.SupportedFeatures, SupportedFeatures())
			}
			var groups []string
			for _, g := range res.Config.Gateways {
				groups = append(groups, g.Group)
			}
			if tc.wantGroup == "" && len(groups) > 0 || tc.wantGroup != "" && !slices.Equal(groups, []string{tc.wantGroup}) {
				t.Fatalf("model gateway groups %v; want [%s]", groups, tc.wantGroup)
			}
			if !tc.wantStatus {
				wantCond(t, res.Status.Gateways[gwKey].Conditions, string(gatewayv1.GatewayConditionAccepted), false, string(gatewayv1.GatewayReasonInvalidParameters))
			}
		})
	}
}

func TestOtherControllersAreIgnored(t *testing.T) {
	in := world(t)
	in.Classes[0].Spec.ControllerName = "example.com/other"
	in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r"))
	res := Build(in)
	if len(res.Status.GatewayClasses)+len(res.Status.Gateways)+len(res.Status.HTTPRoutes) != 0 {
		t.Fatalf("status written for another controller's objects: %+v", res.Status)
	}
	if len(res.Config.Gateways)+len(res.Config.Services) != 0 {
		t.Fatalf("model built from another controller's objects: %+v", res.Config)
	}
}

func TestSupportedFeaturesAreKnown(t *testing.T) {
	fs := SupportedFeatures()
	for _, want := range []features.FeatureName{features.SupportGateway, features.SupportHTTPRoute, features.SupportReferenceGrant, features.SupportGRPCRoute, features.SupportTLSRoute} {
		if !slices.Contains(fs, want) {
			t.Errorf("core feature %s not claimed", want)
		}
	}
	known := features.SetsToNamesSet(features.AllFeatures)
	for _, f := range fs {
		if !known.Has(f) {
			t.Errorf("feature %s is not a feature of gateway-api v1.6.3", f)
		}
	}
	if !slices.IsSorted(fs) {
		t.Errorf("features not sorted: %v", fs)
	}
}

func TestMergeConditionsKeepsUnchangedTransitions(t *testing.T) {
	old := metav1.NewTime(testNow.Add(-24 * 3600e9))
	now := metav1.NewTime(testNow)
	prev := []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: old},
		{Type: "Programmed", Status: metav1.ConditionFalse, Reason: "AddressNotAssigned", LastTransitionTime: old},
		{Type: "Gone", Status: metav1.ConditionTrue, Reason: "X", LastTransitionTime: old},
	}
	next := []metav1.Condition{
		{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "new text", ObservedGeneration: 4, LastTransitionTime: now},
		{Type: "Programmed", Status: metav1.ConditionTrue, Reason: "Programmed", LastTransitionTime: now},
		{Type: "ResolvedRefs", Status: metav1.ConditionTrue, Reason: "ResolvedRefs", LastTransitionTime: now},
	}
	got := MergeConditions(prev, next)
	want := []metav1.Time{old, now, now}
	if len(got) != len(next) {
		t.Fatalf("got %d conditions; want %d", len(got), len(next))
	}
	for i, c := range got {
		if !c.LastTransitionTime.Equal(&want[i]) {
			t.Errorf("%s: transition %v; want %v", c.Type, c.LastTransitionTime, want[i])
		}
		if c.Message != next[i].Message || c.ObservedGeneration != next[i].ObservedGeneration {
			t.Errorf("%s: message/generation not taken from the new condition: %+v", c.Type, c)
		}
	}
}
