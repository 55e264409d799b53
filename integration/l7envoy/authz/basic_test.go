package authz

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/tlbproject/tlb/internal/poll"
)

// basicApp protects /ops of a service with basicAuth; /app of the same
// service and host does not list it (seed 000's incident: basicAuth on
// some routes must not reach the others).
const basicApp = `kind: gateway/service/v1
name: console
group: edge
hosts: [app.example.com]
listeners: [public/web]
upstreams:
  - {name: main, endpoints: ["$BACKEND"]}
routes:
  - name: ops
    prefix: /ops
    target: main
    interceptors: [{type: basicAuth, usersFile: "$USERS", realm: ops, timeout: 5s}]
  - {name: app, prefix: /app, target: main}
`

// htpasswdLine is user's line of an htpasswd file, a bcrypt hash at cost 5
// as htpasswd -B makes by default.
func htpasswdLine(t *testing.T, user, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), 5)
	if err != nil {
		t.Fatal(err)
	}
	return user + ":" + string(h) + "\n"
}

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// TestBasicAuthExactlyOnItsRoutes: through Envoy, the route that lists
// basicAuth asks for credentials and takes only right ones (the upstream
// never sees them); its sibling route of the same service and host asks
// for nothing and never calls the authorization service; a user added to
// the file is accepted without a reload.
func TestBasicAuthExactlyOnItsRoutes(t *testing.T) {
	users := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(users, []byte(htpasswdLine(t, "ops", "s3cret")+htpasswdLine(t, "dev", "pa:ss")), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startSite(t, siteOptions{hostIP: "127.0.22.4", files: map[string]string{"console.yaml": basicApp},
		vars: map[string]string{"$USERS": users}})

	const challenge = `Basic realm="ops", charset="UTF-8"`
	cases := []struct {
		name    string
		path    string
		auth    string // Authorization sent ("" none)
		status  int
		checked bool // the authorization service is called
	}{
		{name: "protected: no credentials", path: "/ops", status: 401, checked: true},
		{name: "protected: right password", path: "/ops/metrics", auth: basic("ops", "s3cret"), status: 200, checked: true},
		{name: "protected: password with a colon", path: "/ops", auth: basic("dev", "pa:ss"), status: 200, checked: true},
		{name: "protected: wrong password", path: "/ops", auth: basic("ops", "S3cret"), status: 401, checked: true},
		{name: "protected: unknown user", path: "/ops", auth: basic("root", "s3cret"), status: 401, checked: true},
		{name: "protected: another scheme", path: "/ops", auth: "Bearer s3cret", status: 401, checked: true},
		{name: "protected: not base64", path: "/ops", auth: "Basic !!!", status: 401, checked: true},
		{name: "sibling: no credentials", path: "/app", status: 200},
		{name: "sibling: wrong password is not checked", path: "/app/x", auth: basic("ops", "wrong"), status: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{}
			if tc.auth != "" {
				h["authorization"] = tc.auth
			}
			before := s.authzChecks(t)
			r := s.client(t, "").do(req{path: tc.path, headers: h})
			if r.status != tc.status {
				t.Fatalf("%s: %d %q, want %d", tc.path, r.status, r.body, tc.status)
			}
			got := r.header.Get("WWW-Authenticate")
			if tc.status == 401 {
				if got != challenge || r.backend != nil {
					t.Errorf("401 with WWW-Authenticate %q (backend %v), want %q from the gateway", got, r.backend, challenge)
				}
			} else {
				if got != "" {
					t.Errorf("WWW-Authenticate %q on a %d", got, r.status)
				}
				if r.backend == nil {
					t.Fatalf("200 not from the backend: %q", r.body)
				}
				// The protected route takes the credentials away; the
				// sibling passes what the client sent, untouched.
				if want := map[bool]string{true: "", false: tc.auth}[tc.checked]; r.backend.Headers["authorization"] != want {
					t.Errorf("backend got Authorization %q, want %q", r.backend.Headers["authorization"], want)
				}
			}
			if after := s.authzChecks(t); (after > before) != tc.checked || after-before > 1 {
				t.Errorf("authorization checks %v -> %v, want one call: %v", before, after, tc.checked)
			}
		})
	}

	t.Run("a user added to the file", func(t *testing.T) {
		f, err := os.OpenFile(users, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(htpasswdLine(t, "new", "fresh")); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		c := s.client(t, "")
		poll.Until(t, 30*time.Second, "the new user is accepted", func() bool {
			return c.do(req{path: "/ops", headers: map[string]string{"authorization": basic("new", "fresh")}}).status == 200
		})
		if r := c.do(req{path: "/ops", headers: map[string]string{"authorization": basic("ops", "s3cret")}}); r.status != 200 {
			t.Errorf("the old user after the change: %d", r.status)
		}
	})
}
