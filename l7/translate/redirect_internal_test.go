package translate

import (
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// Every redirect status Gateway API allows is answered as asked; unset
// is 302.
func TestRedirectActionStatusCodes(t *testing.T) {
	for code, want := range map[int]route.RedirectAction_RedirectResponseCode{
		0:   route.RedirectAction_FOUND,
		301: route.RedirectAction_MOVED_PERMANENTLY,
		302: route.RedirectAction_FOUND,
		303: route.RedirectAction_SEE_OTHER,
		307: route.RedirectAction_TEMPORARY_REDIRECT,
		308: route.RedirectAction_PERMANENT_REDIRECT,
	} {
		if !model.RedirectCode(code) && code != 0 {
			t.Errorf("model.RedirectCode(%d) = false; the model must allow it", code)
		}
		got := redirectAction(model.Route{Redirect: &model.Redirect{StatusCode: code}}).GetResponseCode()
		if got != want {
			t.Errorf("redirect %d: response code %v, want %v", code, got, want)
		}
	}
	for _, code := range []int{200, 300, 304, 305, 404} {
		if model.RedirectCode(code) {
			t.Errorf("model.RedirectCode(%d) = true", code)
		}
	}
}

// A backend timeout is the per-try timeout of a route that does not
// retry, or of its retries when they set none of their own.
func TestRouteBackendTimeoutIsThePerTryTimeout(t *testing.T) {
	svc := func(r model.Route) model.Service {
		r.Targets = []model.WeightedTarget{{Upstream: "a"}}
		return model.Service{Name: "web", Upstreams: []model.Upstream{{Name: "a"}}, Routes: []model.Route{r}}
	}
	a := routeOf(svc(model.Route{Prefix: "/", Timeout: 10 * time.Second, BackendTimeout: 2 * time.Second}), 0, httpFilters{}).GetRoute()
	if a.GetTimeout().AsDuration() != 10*time.Second || a.GetRetryPolicy().GetPerTryTimeout().AsDuration() != 2*time.Second ||
		a.GetRetryPolicy().GetNumRetries() == nil || a.GetRetryPolicy().GetNumRetries().GetValue() != 0 {
		t.Errorf("timeout %v, retry policy %v; want 10s, per try 2s and no retry", a.GetTimeout(), a.GetRetryPolicy())
	}
	r := routeOf(svc(model.Route{Prefix: "/", BackendTimeout: 2 * time.Second, Retries: &model.RetryPolicy{Attempts: 3, PerTry: time.Second}}), 0, httpFilters{}).GetRoute()
	if r.GetRetryPolicy().GetPerTryTimeout().AsDuration() != time.Second || r.GetRetryPolicy().GetNumRetries().GetValue() != 3 {
		t.Errorf("retry policy %v; want the retries' own per-try timeout 1s and 3 retries", r.GetRetryPolicy())
	}
	if p := routeOf(svc(model.Route{Prefix: "/"}), 0, httpFilters{}).GetRoute().GetRetryPolicy(); p != nil {
		t.Errorf("retry policy %v on a route with no backend timeout and no retries", p)
	}
}
