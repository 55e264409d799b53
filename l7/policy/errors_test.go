package policy

import (
	"errors"
	"testing"

	"github.com/tlbproject/tlb/api"
)

// TestErrorsNameTheField: each conversion's errors name the field from
// the function's root, for the front end to prefix with its own path.
func TestErrorsNameTheField(t *testing.T) {
	soon, off := "soon", "off"
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"cors max age": {second(CORS(&api.CORS{MaxAge: "soon"})), `maxAge: want a positive duration such as "10m", got "soon"`},
		"burst":        {second(RateLimit(&api.RateLimit{Local: &api.LocalRateLimit{Burst: -1}})), "local.burst: must not be negative"},
		"requests": {second(RateLimit(&api.RateLimit{Global: &api.GlobalRateLimit{PerRoute: &api.RateLimitQuota{Requests: 1 << 32}}})),
			"global.perRoute.requests: must be at most 4294967295"},
		"algorithm":    {second(JWT(&api.JWT{Algorithm: "HS256"}, "hmacSecretRef", false)), "algorithm: only with hmacSecretRef (a public key's type says its algorithm)"},
		"hsts":         {second(ServiceResponses(api.ServiceResponses{HSTS: &api.HSTS{MaxAge: &soon}})), `hsts.maxAge: want a positive duration such as "8760h", got "soon"`},
		"maintenance":  {second(RouteResponses(api.RouteResponses{Maintenance: &api.Maintenance{RetryAfter: &soon}})), `maintenance.retryAfter: want a positive duration such as "10m", got "soon"`},
		"status range": {second(HealthCheck(&api.HealthCheck{HTTP: &api.HTTPHealthCheck{ExpectedStatuses: []api.StatusRange{"200", "2xx"}}})), `http.expectedStatuses[1]: want a status such as 200 or a range such as "200-299", got "2xx"`},
		"check off":    {second(HealthCheck(&api.HealthCheck{TCP: &api.TCPHealthCheck{}, Interval: &off})), "interval and timeout cannot be off"},
		"interceptor":  {second(Interceptors(`[{"type":"sessionInterceptor","timeout":"x"}]`)), `interceptors[0].timeout: bad duration "x"`},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.err == nil || tc.err.Error() != tc.want {
				t.Fatalf("error %v, want %q", tc.err, tc.want)
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }

// TestFieldsAndPath: Fields splits Errors and wraps anything else;
// Path joins without a dot before an index.
func TestFieldsAndPath(t *testing.T) {
	if fs := Fields(Errors{{Field: "a", Msg: "x"}, {Field: "b", Msg: "y"}}); len(fs) != 2 || fs[1].Field != "b" {
		t.Fatalf("Fields(Errors) = %v", fs)
	}
	if fs := Fields(errors.New("plain")); len(fs) != 1 || fs[0].Field != "" || fs[0].Msg != "plain" {
		t.Fatalf("Fields(plain) = %v", fs)
	}
	for _, tc := range [][3]string{{"routes[0]", "cors", "routes[0].cors"}, {"", "maxAge", "maxAge"}, {"spec.cors", "", "spec.cors"}, {"routes[0]", "interceptors[1].x", "routes[0].interceptors[1].x"}, {"errorPages", "[0].body", "errorPages[0].body"}} {
		if got := Path(tc[0], tc[1]); got != tc[2] {
			t.Errorf("Path(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}
