package gatewayapi

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
)

func trafficPolicy(ns, name string, age time.Duration, spec tlbv1alpha1.TrafficPolicySpec) *tlbv1alpha1.TrafficPolicy {
	m := meta(ns, name)
	m.CreationTimestamp = metav1.NewTime(testNow.Add(-age))
	return &tlbv1alpha1.TrafficPolicy{ObjectMeta: m, Spec: spec}
}

func target(kind, name, section string) []gatewayv1.LocalPolicyTargetReferenceWithSectionName {
	t := gatewayv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
		Group: gatewayv1.GroupName, Kind: gatewayv1.Kind(kind), Name: gatewayv1.ObjectName(name)}}
	if section != "" {
		t.SectionName = ptr(gatewayv1.SectionName(section))
	}
	return []gatewayv1.LocalPolicyTargetReferenceWithSectionName{t}
}

func cors(origin string) *api.CORS {
	return &api.CORS{AllowOrigins: []string{origin}, AllowMethods: []string{"GET"}, MaxAge: "10m"}
}

// policyWorld is the test world with a Gateway policy in infra and the
// route app/r (rules "api" with two matches and "web") on http.
func policyWorld(t *testing.T) Inputs {
	in := world(t)
	apiRule := webRule(gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/api")}, gatewayv1.HTTPRouteMatch{Path: pathMatch(gatewayv1.PathMatchPathPrefix, "/v2")})
	apiRule.Name = ptr(gatewayv1.SectionName("api"))
	web := webRule()
	web.Name = ptr(gatewayv1.SectionName("web"))
	in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r", apiRule, web))
	in.Secrets = append(in.Secrets, &corev1.Secret{ObjectMeta: meta("infra", "jwt"), Data: map[string][]byte{"secret": []byte(strings.Repeat("s", 64) + "\n")}})
	in.TrafficPolicies = append(in.TrafficPolicies, trafficPolicy("infra", "edge", time.Hour, tlbv1alpha1.TrafficPolicySpec{
		TargetRefs:   target("Gateway", "gw", ""),
		Interceptors: chain.Chain{{Type: chain.TypeCSRF}},
		JWT:          &tlbv1alpha1.PolicyJWT{JWT: api.JWT{Issuer: "https://id.example.com", Required: ptr(false)}, HMACSecretRef: &tlbv1alpha1.SecretKeyRef{Name: "jwt", Key: "secret"}},
		CORS:         cors("https://edge.example.com"),
		RateLimit:    &api.RateLimit{Local: &api.LocalRateLimit{RequestsPerSecond: 10, Burst: 20}},
	}))
	return in
}

func policyStatus(t *testing.T, res Result, ns, name string) metav1.Condition {
	t.Helper()
	st, ok := res.Status.TrafficPolicies[nn(ns, name)]
	if !ok || len(st.Ancestors) != 1 {
		t.Fatalf("policy %s/%s status %+v; want one ancestor", ns, name, st)
	}
	if st.Ancestors[0].ControllerName != ControllerName {
		t.Fatalf("ancestor controller %q", st.Ancestors[0].ControllerName)
	}
	return cond(t, st.Ancestors[0].Conditions, "Accepted")
}

func onlyService(t *testing.T, res Result) model.Service {
	t.Helper()
	if len(res.Config.Services) != 1 {
		t.Fatalf("services %s; want one", jsonOf(res.Config.Services))
	}
	return res.Config.Services[0]
}

func TestGatewayPolicyCoversEveryRoute(t *testing.T) {
	in := policyWorld(t)
	res := Build(in)
	if c := policyStatus(t, res, "infra", "edge"); c.Status != metav1.ConditionTrue || c.Reason != "Accepted" || c.ObservedGeneration != 3 {
		t.Fatalf("Accepted %+v; want True/Accepted at generation 3", c)
	}
	s := onlyService(t, res)
	if s.JWT == nil || s.JWT.Issuer != "https://id.example.com" || s.JWT.HMAC.Empty() || s.JWT.HMACAlg != "HS256" || s.JWT.Required {
		t.Fatalf("jwt %+v; want the policy's, HS256 from Secret infra/jwt, not required", s.JWT)
	}
	if s.CORS == nil || s.CORS.Origins[0] != "https://edge.example.com" || s.CORS.MaxAge != 10*time.Minute {
		t.Fatalf("cors %+v; want the policy's", s.CORS)
	}
	if s.RateLimit == nil || s.RateLimit.Local.RequestsPerSecond != 10 || s.RateLimit.Local.Burst != 20 {
		t.Fatalf("rate limit %+v; want the policy's", s.RateLimit)
	}
	for _, r := range s.Routes {
		if len(r.Interceptors) != 1 || r.Interceptors[0].Type != chain.TypeCSRF || r.Interceptors[0].TokenHeader == "" {
			t.Fatalf("route %s interceptors %+v; want csrf with its defaults", r.Name, r.Interceptors)
		}
	}
}

func TestMoreSpecificPolicyWins(t *testing.T) {
	in := policyWorld(t)
	in.TrafficPolicies = append(in.TrafficPolicies,
		trafficPolicy("app", "route", 30*time.Minute, tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""), CORS: cors("https://route.example.com")}),
		trafficPolicy("app", "rule", 20*time.Minute, tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", "api"),
			CORS: cors("https://rule.example.com"), Auth: &api.RouteAuth{Roles: []string{"admin"}}}),
	)
	res := Build(in)
	for _, p := range []string{"route", "rule"} {
		if c := policyStatus(t, res, "app", p); c.Status != metav1.ConditionTrue {
			t.Fatalf("policy %s: %+v; want accepted", p, c)
		}
	}
	s := onlyService(t, res)
	if s.CORS.Origins[0] != "https://route.example.com" {
		t.Fatalf("service cors %v; want the route policy's over the Gateway's", s.CORS.Origins)
	}
	if s.RateLimit == nil {
		t.Fatal("the route policy dropped the Gateway policy's rate limit it does not set")
	}
	for _, r := range s.Routes {
		inAPI := strings.HasPrefix(r.Name, "api-")
		if inAPI != (r.CORS != nil && r.CORS.Origins[0] == "https://rule.example.com") || inAPI != r.Auth.NeedsRoles() {
			t.Fatalf("route %s cors %+v auth %+v; want the rule policy on the api rule's routes only", r.Name, r.CORS, r.Auth)
		}
	}
}

func TestPolicyConditions(t *testing.T) {
	for name, tc := range map[string]struct {
		spec   tlbv1alpha1.TrafficPolicySpec
		reason gatewayv1.PolicyConditionReason
		msg    string
	}{
		"no such Gateway":  {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("Gateway", "nope", ""), CORS: cors("https://a.example.com")}, gatewayv1.PolicyReasonTargetNotFound, "no Gateway app/nope"},
		"no such route":    {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "nope", ""), CORS: cors("https://a.example.com")}, gatewayv1.PolicyReasonTargetNotFound, "no HTTPRoute app/nope"},
		"no such rule":     {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", "nope"), CORS: cors("https://a.example.com")}, gatewayv1.PolicyReasonTargetNotFound, `no rule named "nope"`},
		"kind unsupported": {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("TLSRoute", "r", ""), CORS: cors("https://a.example.com")}, gatewayv1.PolicyReasonInvalid, "kind"},
		"jwt on a rule": {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", "api"),
			JWT: &tlbv1alpha1.PolicyJWT{HMACSecretRef: &tlbv1alpha1.SecretKeyRef{Name: "jwt", Key: "secret"}}}, gatewayv1.PolicyReasonInvalid, "spec.jwt"},
		"bad interceptor": {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""), Interceptors: chain.Chain{{Type: "nope"}}}, gatewayv1.PolicyReasonInvalid, "spec.interceptors"},
		"own interceptor URL": {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""),
			Interceptors: chain.Chain{{Type: chain.TypeExternal, ID: "x", Transport: chain.TransportREST, URL: "http://10.0.0.1/"}}},
			gatewayv1.PolicyReasonInvalid, "spec.interceptors: interceptors[0].url: a Kubernetes object may not name where an interceptor is"},
		"own htpasswd path": {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""),
			Interceptors: chain.Chain{{Type: chain.TypeBasicAuth, UsersFile: "/dev/zero"}}},
			gatewayv1.PolicyReasonInvalid, "spec.interceptors: interceptors[0].usersFile"},
		"bad cors maxAge": {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""), CORS: &api.CORS{AllowOrigins: []string{"https://a.example.com"}, MaxAge: "soon"}},
			gatewayv1.PolicyReasonInvalid, "spec.cors.maxAge"},
		"missing HMAC Secret": {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""),
			JWT: &tlbv1alpha1.PolicyJWT{HMACSecretRef: &tlbv1alpha1.SecretKeyRef{Name: "nope", Key: "secret"}}}, gatewayv1.PolicyReasonInvalid, "spec.jwt.hmacSecretRef"},
		"fails the model's checks": {tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""),
			CORS: &api.CORS{AllowOrigins: []string{"not an origin"}}}, gatewayv1.PolicyReasonInvalid, "on hr.app.r"},
	} {
		t.Run(name, func(t *testing.T) {
			in := policyWorld(t)
			in.TrafficPolicies = []*tlbv1alpha1.TrafficPolicy{trafficPolicy("app", "p", time.Minute, tc.spec)}
			res := Build(in)
			c := policyStatus(t, res, "app", "p")
			if c.Status != metav1.ConditionFalse || c.Reason != string(tc.reason) || !strings.Contains(c.Message, tc.msg) {
				t.Fatalf("Accepted %s/%s %q; want False/%s saying %q", c.Status, c.Reason, c.Message, tc.reason, tc.msg)
			}
			s := onlyService(t, res)
			if s.CORS != nil || s.JWT != nil || s.Routes[0].Interceptors != nil {
				t.Fatalf("a rejected policy changed the service: %s", jsonOf(s))
			}
		})
	}
}

func TestPolicyConflictOldestWins(t *testing.T) {
	in := policyWorld(t)
	in.TrafficPolicies = []*tlbv1alpha1.TrafficPolicy{
		trafficPolicy("app", "young", time.Minute, tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""), CORS: cors("https://young.example.com")}),
		trafficPolicy("app", "old", time.Hour, tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("HTTPRoute", "r", ""), CORS: cors("https://old.example.com")}),
	}
	res := Build(in)
	if c := policyStatus(t, res, "app", "old"); c.Status != metav1.ConditionTrue {
		t.Fatalf("old: %+v; want accepted", c)
	}
	if c := policyStatus(t, res, "app", "young"); c.Status != metav1.ConditionFalse || c.Reason != string(gatewayv1.PolicyReasonConflicted) {
		t.Fatalf("young: %+v; want Conflicted", c)
	}
	if s := onlyService(t, res); s.CORS.Origins[0] != "https://old.example.com" {
		t.Fatalf("cors %v; want the oldest policy's", s.CORS.Origins)
	}
}

func TestPolicyAuthNeedsJWT(t *testing.T) {
	in := policyWorld(t)
	in.TrafficPolicies = []*tlbv1alpha1.TrafficPolicy{trafficPolicy("app", "p", time.Minute, tlbv1alpha1.TrafficPolicySpec{
		TargetRefs: target("HTTPRoute", "r", "web"), Auth: &api.RouteAuth{Roles: []string{"admin"}}})}
	res := Build(in)
	if c := policyStatus(t, res, "app", "p"); c.Reason != string(gatewayv1.PolicyReasonInvalid) || !strings.Contains(c.Message, "jwt") {
		t.Fatalf("Accepted %+v; want Invalid saying the route needs jwt", c)
	}
	// With the Gateway policy's JWT the same rule policy is accepted.
	in = policyWorld(t)
	in.TrafficPolicies = append(in.TrafficPolicies, trafficPolicy("app", "p", time.Minute, tlbv1alpha1.TrafficPolicySpec{
		TargetRefs: target("HTTPRoute", "r", "web"), Auth: &api.RouteAuth{Roles: []string{"admin"}}}))
	if c := policyStatus(t, Build(in), "app", "p"); c.Status != metav1.ConditionTrue {
		t.Fatalf("Accepted %+v; want True over the Gateway policy's jwt", c)
	}
}

func TestPolicyOnListenerAndGRPCRoute(t *testing.T) {
	in := world(t)
	onHTTPS := testHTTPRoute("secure")
	onHTTPS.Spec.ParentRefs = []gatewayv1.ParentReference{parentRef("infra", "gw", "https")}
	in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r"), onHTTPS)
	in.GRPCRoutes = append(in.GRPCRoutes, &gatewayv1.GRPCRoute{ObjectMeta: meta("app", "g"), Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "https")}},
		Hostnames:       []gatewayv1.Hostname{"grpc.example.com"},
		Rules:           []gatewayv1.GRPCRouteRule{{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backendRef("", "web", 8080, nil)}}}},
	}})
	in.TrafficPolicies = append(in.TrafficPolicies,
		trafficPolicy("infra", "https-only", time.Hour, tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("Gateway", "gw", "https"), CORS: cors("https://tls.example.com")}),
		trafficPolicy("app", "grpc", time.Hour, tlbv1alpha1.TrafficPolicySpec{TargetRefs: target("GRPCRoute", "g", ""),
			RateLimit: &api.RateLimit{Local: &api.LocalRateLimit{RequestsPerSecond: 0.5, Burst: 1}}}),
	)
	res := Build(in)
	for _, p := range []struct{ ns, name string }{{"infra", "https-only"}, {"app", "grpc"}} {
		if c := policyStatus(t, res, p.ns, p.name); c.Status != metav1.ConditionTrue {
			t.Fatalf("policy %s: %+v; want accepted", p.name, c)
		}
	}
	got := map[string]model.Service{}
	for _, s := range res.Config.Services {
		got[s.Name] = s
	}
	if got["hr.app.r"].CORS != nil || got["hr.app.secure"].CORS == nil || got["gr.app.g"].CORS == nil {
		t.Fatalf("cors on r %v, secure %v, g %v; want the https listener's routes only", got["hr.app.r"].CORS, got["hr.app.secure"].CORS, got["gr.app.g"].CORS)
	}
	if rl := got["gr.app.g"].RateLimit; rl == nil || rl.Local.RequestsPerSecond != 0.5 {
		t.Fatalf("grpc rate limit %+v; want the policy's", rl)
	}
}
