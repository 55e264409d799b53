package translate

import (
	"testing"

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
