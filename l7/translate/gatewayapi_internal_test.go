package translate

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/model"
)

// Every redirect status Gateway API allows is answered as asked: the
// Envoy code's name is the HTTP status text (301 Moved Permanently is
// MOVED_PERMANENTLY); unset is 302.
func TestRedirectActionStatusCodes(t *testing.T) {
	for _, code := range []int{0, 301, 302, 303, 307, 308} {
		if code != 0 && !model.RedirectCode(code) {
			t.Errorf("model.RedirectCode(%d) = false; the model must allow it", code)
		}
		want := code
		if code == 0 {
			want = http.StatusFound
		}
		name := strings.ToUpper(strings.ReplaceAll(http.StatusText(want), " ", "_"))
		got := redirectAction(model.Route{Redirect: &model.Redirect{StatusCode: code}}, 0).GetResponseCode()
		if got.String() != name {
			t.Errorf("redirect %d: response code %v, want %s", code, got, name)
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
