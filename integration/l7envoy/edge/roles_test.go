package edge

import (
	"fmt"
	"strings"
	"testing"
)

// TestClaimsAndRoles: a verified token's claims reach the backend as
// headers and a client's own copies of those headers never do; routes
// with roles want (any of roles) and (all of rolesAll) in the roles
// claim: no token or a bad one is 401, a missing or malformed roles claim
// is 401 with an invalid_token challenge, a well-formed claim without the
// roles is 403. Routes without roles never look at the claim.
func TestClaimsAndRoles(t *testing.T) {
	const vip, node = "127.0.21.12", "127.0.21.112"
	b := startBackend(t, "reports")
	s := newSigner(t, "HS256")
	startGateway(t, node, map[string]string{
		"keys/reports.key": s.keyFile(t),
		"gw.yaml": fmt.Sprintf(`kind: gateway/gateway/v1
name: public
group: edge
listeners: [{name: web, vip: %s, port: 21080, protocol: HTTP}]
`, vip),
		"reports.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: reports
group: edge
hosts: [reports.example.com]
listeners: [public/web]
jwt:
  issuer: %s
  audiences: [%s]
  hmacSecretFile: keys/reports.key
  claimMappings: {sub: x-user-id, email: x-user-email}
  stripAuthorization: true
upstreams: [{name: main, endpoints: ["%s"]}]
routes:
  - {name: admin, prefix: /admin, target: main, auth: {roles: [admin, ops], rolesAll: [staff]}}
  - {name: any, prefix: /any, target: main, auth: {roles: [admin, ops]}}
  - {name: all, prefix: /all, target: main, auth: {rolesAll: [staff, audit]}}
  - {name: optional, prefix: /optional, target: main, auth: {required: false}}
  - {name: open, prefix: /, target: main}
`, issuer, audience, b.addr()),
		"plain.yaml": service("plain", "plain.example.com", "public/web", b),
	})
	c := plainClient(vip + ":21080")
	tok := func(roles any) map[string]string {
		extra := claims{"email": "ann@example.com"}
		if roles != nil {
			extra["roles"] = roles
		}
		return bearer(s.token(t, validClaims(issuer, audience, "ann", extra)))
	}
	many := func(n int, with string) []string {
		out := []string{with}
		for i := 1; i < n; i++ {
			out = append(out, fmt.Sprintf("role-%d", i))
		}
		return out
	}
	for _, tc := range []struct {
		name, path string
		header     map[string]string
		status     int
		malformed  bool // a 401 for the roles claim (its own challenge)
	}{
		{"any-of: a string", "/any", tok("admin"), 200, false},
		{"any-of: second of an array", "/any", tok([]string{"viewer", "ops"}), 200, false},
		{"any-of: none of them", "/any", tok([]string{"viewer"}), 403, false},
		{"any-of: an empty array", "/any", tok([]string{}), 403, false},
		{"any-of: no token", "/any", nil, 401, false},
		{"any-of: bad token", "/any", bearer("x.y.z"), 401, false},
		{"any-of: no roles claim", "/any", tok(nil), 401, true},
		{"any-of: roles a number", "/any", tok(7), 401, true},
		{"any-of: roles an object", "/any", tok(map[string]string{"admin": "yes"}), 401, true},
		{"any-of: an array holding a number", "/any", tok([]any{"admin", 1}), 401, true},
		{"any-of: an array holding an object", "/any", tok([]any{"admin", map[string]any{}}), 401, true},
		{"any-of: 32 roles", "/any", tok(many(32, "admin")), 200, false},
		{"any-of: 33 roles (more than MaxRoles)", "/any", tok(many(33, "admin")), 401, true},
		{"all-of: both", "/all", tok([]string{"audit", "staff"}), 200, false},
		{"all-of: one of two", "/all", tok([]string{"staff"}), 403, false},
		{"all-of: a string for one of two", "/all", tok("staff"), 403, false},
		{"any and all: both parts", "/admin", tok([]string{"ops", "staff"}), 200, false},
		{"any and all: any part only", "/admin", tok([]string{"admin"}), 403, false},
		{"any and all: all part only", "/admin", tok([]string{"staff"}), 403, false},
		{"no roles asked: malformed claim is not looked at", "/reports", tok([]any{"admin", 1}), 200, false},
		{"no roles asked: no roles claim", "/reports", tok(nil), 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(t, c, request{URL: "http://reports.example.com" + tc.path, Header: tc.header})
			r.wantStatus(t, tc.status)
			if tc.status != 200 && r.Saw != nil {
				t.Errorf("the backend saw a refused request: %+v", r.Saw)
			}
			www := r.Header.Get("www-authenticate")
			switch {
			case tc.status == 401 && !strings.HasPrefix(www, "Bearer"):
				t.Errorf("www-authenticate %q, want a Bearer challenge", www)
			case tc.malformed && !strings.Contains(www, "roles claim missing or malformed"):
				t.Errorf("www-authenticate %q, want the roles claim named", www)
			case tc.status == 403 && www != "":
				t.Errorf("403 with a challenge %q: the token is fine, the roles are not", www)
			}
		})
	}

	for _, tc := range []struct {
		name, url     string
		header        map[string]string
		user, email   string
		userPresent   bool
		emailPresent  bool
		authorization bool
	}{
		{name: "claims copied", url: "http://reports.example.com/x", header: tok(nil),
			user: "ann", userPresent: true, email: "ann@example.com", emailPresent: true},
		{name: "client's x-user-id replaced by the token's", url: "http://reports.example.com/x",
			header: merge(tok(nil), map[string]string{"x-user-id": "root", "x-user-email": "root@example.com"}),
			user:   "ann", userPresent: true, email: "ann@example.com", emailPresent: true},
		{name: "client's claim header removed when the token lacks the claim", url: "http://reports.example.com/x",
			header: merge(bearer(s.token(t, validClaims(issuer, audience, "ann", nil))), map[string]string{"x-user-email": "root@example.com"}),
			user:   "ann", userPresent: true},
		{name: "client's x-user-id removed on an optional route without a token", url: "http://reports.example.com/optional",
			header: map[string]string{"x-user-id": "root"}},
		{name: "client's x-user-id removed on an optional route with a bad token", url: "http://reports.example.com/optional",
			header: merge(bearer("x.y.z"), map[string]string{"x-user-id": "root"}), authorization: true},
		// Envoy's jwt_authn removes the claim headers of every provider of
		// the listener from every request through it, even on routes where
		// it is disabled: another service on the listener loses them too.
		{name: "another service on the listener loses x-user-id too", url: "http://plain.example.com/",
			header: map[string]string{"x-user-id": "spoofed", "x-user-email": "spoofed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(t, c, request{URL: tc.url, Header: tc.header})
			r.wantStatus(t, 200)
			if got, ok := r.sawHeader("x-user-id"); got != tc.user || ok != tc.userPresent {
				t.Errorf("x-user-id upstream %q (present %v), want %q (present %v)", got, ok, tc.user, tc.userPresent)
			}
			if got, ok := r.sawHeader("x-user-email"); got != tc.email || ok != tc.emailPresent {
				t.Errorf("x-user-email upstream %q (present %v), want %q (present %v)", got, ok, tc.email, tc.emailPresent)
			}
			if _, ok := r.sawHeader("authorization"); ok != tc.authorization {
				t.Errorf("authorization upstream: %v, want %v (stripAuthorization removes a verified token only)", ok, tc.authorization)
			}
		})
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
