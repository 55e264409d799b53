//go:build k8s

package tenant

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/internal/poll"
)

// forged are the identity headers a client makes up, in the case it
// likes.
var forged = map[string]string{"X-User-Id": "mallory", "x-user-roles": "admin", "X-User-Email": "mallory@example.com"}

// TestForgedIdentityNeverReachesABackend: a client's own x-user-id and
// x-user-roles never reach a backend behind a listener where a gateway
// function sets them: not on the route that sets them (replaced by the
// session's), not on a sibling route of the same host that checks
// nothing, not on another namespace's route of the same Gateway listener
// (issue 22 item 3: through Envoy, x-user-id: mallory reached the backend
// on a route without interceptors). A session whose field would split the
// header fails closed in l7 itself (item 6).
func TestForgedIdentityNeverReachesABackend(t *testing.T) {
	s := startSite(t, 2)
	op := s.operator(t)
	session, csrf := s.login(t, "eve")

	check := func(t *testing.T, what string, r reply, want map[string]string) {
		t.Helper()
		if r.status != 200 || r.backend == nil {
			t.Fatalf("%s: %d %q, want the backend's 200", what, r.status, r.body)
		}
		for _, h := range []string{"x-user-id", "x-user-roles"} {
			if got := r.backend.Headers[h]; got != want[h] {
				t.Errorf("%s: the backend got %s %q, want %q", what, h, got, want[h])
			}
		}
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range forged {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	check(t, "operator route without interceptors", op.do(req{host: appHost, path: "/public", headers: with(nil)}), nil)
	check(t, "operator route that checks only basic auth", op.do(req{host: appHost, path: "/ops",
		headers: with(map[string]string{"authorization": basic(opsUser, opsPassword)})}), nil)
	check(t, "operator session route, own session", op.do(req{host: appHost, path: "/account",
		headers: with(map[string]string{"cookie": "session=" + session + "; csrf_token=" + csrf})}), map[string]string{"x-user-id": "eve"})
	if r := op.do(req{host: appHost, path: "/account", headers: with(nil)}); r.status != 401 || r.backend != nil {
		t.Errorf("session route without a session: %d, want 401 from l7", r.status)
	}

	t.Run("Gateway API routes of two namespaces", func(t *testing.T) {
		teamA, teamB := newTenant(t, s.ns.teamA), newTenant(t, s.ns.teamB)
		gwVIP := net.JoinHostPort(s.vip(19), strconv.Itoa(gatewayPort))
		sharedGateway(t, s, s.vip(19))
		web(t, s, teamB)
		apply(t, teamB.config, teamB.ns, fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: shared, namespace: %s}]
  hostnames: [b.example.com]
  rules: [{backendRefs: [{name: web, port: 80}]}]
`, s.ns.infra))
		web(t, s, teamA)
		apply(t, teamA.config, teamA.ns, fmt.Sprintf(`apiVersion: tlb.io/v1alpha1
kind: TrafficPolicy
metadata: {name: p}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r, sectionName: private}]
  interceptors: [{type: sessionInterceptor, timeout: 2s}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: shared, namespace: %s}]
  hostnames: [a.example.com]
  rules:
    - name: private
      matches: [{path: {type: PathPrefix, value: /private}}]
      backendRefs: [{name: web, port: 80}]
    - name: open
      matches: [{path: {type: PathPrefix, value: /open}}]
      backendRefs: [{name: web, port: 80}]
`, s.ns.infra))
		s.waitListener(t, gwVIP)
		gw := clientOf(t, gwVIP)
		poll.Until(t, 2*time.Minute, "team-a's private rule asks for a session", func() bool {
			r, err := gw.try(req{host: "a.example.com", path: "/private"})
			return err == nil && r.status == 401
		})
		poll.Until(t, 2*time.Minute, "team-b's route is served", func() bool {
			r, err := gw.try(req{host: "b.example.com", path: "/"})
			return err == nil && r.backend != nil
		})
		check(t, "team-a's rule without interceptors", gw.do(req{host: "a.example.com", path: "/open", headers: with(nil)}), nil)
		check(t, "team-b's route on the same listener", gw.do(req{host: "b.example.com", path: "/", headers: with(nil)}), nil)
		check(t, "team-a's session rule", gw.do(req{host: "a.example.com", path: "/private",
			headers: with(map[string]string{"cookie": "session=" + session})}), map[string]string{"x-user-id": "eve"})
	})

	t.Run("a session field that would split the header", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.redis.sessions.Save(ctx, "split", map[string]string{"user": "ada\r\nx-admin: yes", "csrf": "t"}, time.Hour); err != nil {
			t.Fatal(err)
		}
		errorsBefore := s.metric(t, "tlb_l7_authz_checks_total", `result="error"`)
		r := op.do(req{host: appHost, path: "/account", headers: map[string]string{"cookie": "session=split"}})
		if r.status != 503 || r.backend != nil || !strings.Contains(r.body, "the authorization check failed") {
			t.Errorf("%d %q (backend %v), want l7's own 503: the check fails, no header is sent", r.status, r.body, r.backend)
		}
		if after := s.metric(t, "tlb_l7_authz_checks_total", `result="error"`); after != errorsBefore+1 {
			t.Errorf("l7's failed checks %v -> %v, want one more", errorsBefore, after)
		}
	})
}
