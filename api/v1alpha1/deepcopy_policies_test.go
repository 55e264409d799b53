package v1alpha1

import (
	"reflect"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
)

func full() *TrafficPolicy {
	yes := true
	section := gatewayv1.SectionName("api")
	return &TrafficPolicy{
		Spec: TrafficPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{
				LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Name: "r"},
				SectionName:                &section}},
			Interceptors: api.InterceptorChain{{Type: api.InterceptorSession, Headers: map[string]string{"user": "x-user"}, AllowedOrigins: []string{"https://a"}, Parameters: map[string]string{"k": "v"}}},
			JWT: &PolicyJWT{JWT: api.JWT{Issuer: "i", Audiences: []string{"a"}, ClaimMappings: map[string]string{"sub": "x-sub"}, Required: &yes},
				HMACSecretRef: &SecretKeyRef{Name: "s", Key: "k"}},
			Auth:      &api.RouteAuth{Required: &yes, Roles: []string{"r"}, RolesAll: []string{"a"}},
			CORS:      &api.CORS{AllowOrigins: []string{"o"}, AllowMethods: []string{"GET"}, AllowHeaders: []string{"h"}, ExposeHeaders: []string{"e"}},
			RateLimit: &api.RateLimit{Local: &api.LocalRateLimit{RequestsPerSecond: 1}, Global: &api.GlobalRateLimit{PerClientIP: &api.RateLimitQuota{Requests: 1, Unit: "second"}, PerRoute: &api.RateLimitQuota{Requests: 2, Unit: "minute"}}},
		},
	}
}

// TestTrafficPolicyDeepCopy: the copy equals the original and shares no
// memory with it: changing every reference field of the original leaves
// the copy as it was.
func TestTrafficPolicyDeepCopy(t *testing.T) {
	p := full()
	c := p.DeepCopy()
	if !reflect.DeepEqual(p, c) {
		t.Fatalf("copy differs:\n%+v\n%+v", p.Spec, c.Spec)
	}
	s := &p.Spec
	*s.TargetRefs[0].SectionName = "other"
	s.Interceptors[0].Headers["user"] = "changed"
	s.Interceptors[0].AllowedOrigins[0] = "changed"
	s.Interceptors[0].Parameters["k"] = "changed"
	s.JWT.Audiences[0], s.JWT.HMACSecretRef.Name, s.JWT.ClaimMappings["sub"], *s.JWT.Required = "changed", "changed", "changed", false
	*s.Auth.Required, s.Auth.Roles[0], s.Auth.RolesAll[0] = false, "changed", "changed"
	s.CORS.AllowOrigins[0], s.CORS.AllowMethods[0], s.CORS.AllowHeaders[0], s.CORS.ExposeHeaders[0] = "changed", "changed", "changed", "changed"
	s.RateLimit.Local.RequestsPerSecond, s.RateLimit.Global.PerClientIP.Requests, s.RateLimit.Global.PerRoute.Unit = 9, 9, "changed"
	if !reflect.DeepEqual(c, full()) {
		t.Fatalf("changing the original changed the copy:\n%+v", c.Spec)
	}
}
