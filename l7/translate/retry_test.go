package translate_test

import (
	"net/netip"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	previoushosts "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// TestRetriesLeaveTheFailedHost: a route that retries asks Envoy to pick
// another host than the ones already tried (previous_hosts), with enough
// picks for ring hash, which walks the ring one entry per pick. Without
// it the real Envoy retried a sticky route on the very endpoint that had
// refused the connection, every time (integration/l7envoy/upstream
// TestTimeoutsAndRetries).
func TestRetriesLeaveTheFailedHost(t *testing.T) {
	ep := []model.Endpoint{{Addr: netip.MustParseAddrPort("198.51.100.1:80"), Weight: 1}, {Addr: netip.MustParseAddrPort("198.51.100.2:80"), Weight: 1}}
	target := []model.WeightedTarget{{Upstream: "u", Weight: 1}}
	svc := model.Service{Name: "svc", Group: "g", Hosts: []string{"svc.example"}, Upstreams: []model.Upstream{{Name: "u", Endpoints: ep}},
		Routes: []model.Route{
			{Name: "sticky", Prefix: "/s", Targets: target, Retries: &model.RetryPolicy{Attempts: 2}, Sticky: &model.CookieSticky{Cookie: "s"}},
			{Name: "plain", Prefix: "/p", Targets: target, Retries: &model.RetryPolicy{Attempts: 1, On: "5xx"}},
			{Name: "none", Prefix: "/n", Targets: target},
		}}
	r := resolve(t, model.Config{Services: []model.Service{svc}}, model.Options{})
	for _, rc := range translate.GroupRoutes(r, "g") {
		for _, vh := range rc.GetVirtualHosts() {
			for _, rt := range vh.GetRoutes() {
				if err := validate.Message(rt); err != nil {
					t.Fatal(err)
				}
				rp := rt.GetRoute().GetRetryPolicy()
				if rt.GetName() == "svc/none" {
					if rp != nil {
						t.Errorf("%s: retry policy %v without retries", rt.GetName(), rp)
					}
					continue
				}
				if !previousHosts(t, rp) || rp.GetHostSelectionRetryMaxAttempts() < 10 {
					t.Errorf("%s: retry policy %v, want the previous_hosts predicate and at least 10 host picks", rt.GetName(), rp)
				}
			}
		}
	}
}

func previousHosts(t *testing.T, rp *route.RetryPolicy) bool {
	t.Helper()
	for _, p := range rp.GetRetryHostPredicate() {
		var ph previoushosts.PreviousHostsPredicate
		if p.GetName() == "envoy.retry_host_predicates.previous_hosts" && p.GetTypedConfig().UnmarshalTo(&ph) == nil {
			return true
		}
	}
	return false
}
