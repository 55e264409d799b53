package authz

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

func TestCheckSessionForwardsIdentityFromRedis(t *testing.T) {
	e := newEnv(t)
	if err := e.sessions.Save(context.Background(), "s3cr3t-1", map[string]string{"user": "u-42", "roles": "admin,dev"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	value := encode(t, chain.Interceptor{Type: chain.TypeSession, Cookie: "sid",
		Headers: map[string]string{"user": "x-user-id", "roles": "x-user-roles", "email": "x-user-email"}})
	a := mustAllow(t, e.check(t, value, req{headers: map[string]string{
		"cookie":       "theme=dark; sid=s3cr3t-1; other=1",
		"x-user-id":    "spoofed",
		"x-user-email": "spoofed@example.com",
	}}))
	if a.upstream["x-user-id"] != "u-42" || a.upstream["x-user-roles"] != "admin,dev" {
		t.Errorf("identity headers = %v, want x-user-id u-42 and x-user-roles admin,dev", a.upstream)
	}
	if _, ok := a.upstream["x-user-email"]; ok || !slices.Contains(a.remove, "x-user-email") {
		t.Errorf("the session has no email: x-user-email must be removed (a client's own value never reaches the upstream); set %v, removed %v", a.upstream, a.remove)
	}
}

func TestCheckSessionMissingAnswers401OrRedirect(t *testing.T) {
	e := newEnv(t)
	if err := e.sessions.Save(context.Background(), "known", map[string]string{"user": "u-1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	unauthorized := encode(t, chain.Interceptor{Type: chain.TypeSession})
	redirect := encode(t, chain.Interceptor{Type: chain.TypeSession, OnMissing: chain.OnMissingRedirect,
		RedirectURL: "https://login.example.com/?next=app"})
	for name, tc := range map[string]struct {
		value, cookie string
		status        int
		location      string
	}{
		"no cookie, 401":             {value: unauthorized, status: 401},
		"unknown session, 401":       {value: unauthorized, cookie: "session=nope", status: 401},
		"malformed id, 401":          {value: unauthorized, cookie: "session=a:b*c", status: 401},
		"other cookie only, 401":     {value: unauthorized, cookie: "sid=known", status: 401},
		"no cookie, redirect":        {value: redirect, status: 302, location: "https://login.example.com/?next=app"},
		"unknown session, redirect":  {value: redirect, cookie: "session=nope", status: 302, location: "https://login.example.com/?next=app"},
		"known session is not a 401": {value: unauthorized, cookie: "session=known"},
	} {
		t.Run(name, func(t *testing.T) {
			resp := e.check(t, tc.value, req{headers: map[string]string{"cookie": tc.cookie}})
			if tc.status == 0 {
				mustAllow(t, resp)
				return
			}
			d := mustDeny(t, resp)
			if d.status != tc.status || d.headers["location"] != tc.location {
				t.Errorf("status %d location %q, want %d %q", d.status, d.headers["location"], tc.status, tc.location)
			}
			if tc.status == 401 && d.code != codes.Unauthenticated {
				t.Errorf("gRPC status %s, want Unauthenticated", d.code)
			}
		})
	}
}

func TestCheckSessionGoneFromRedisIsUnknown(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.sessions.Save(ctx, "short", map[string]string{"user": "u-1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	value := encode(t, chain.Interceptor{Type: chain.TypeSession})
	mustAllow(t, e.check(t, value, req{headers: map[string]string{"cookie": "session=short"}}))
	// Gone from Redis (logged out, or its TTL ran out): unknown from the
	// next check on, with no cache in between.
	if err := e.redis.Del(ctx, "session:short").Err(); err != nil {
		t.Fatal(err)
	}
	d := mustDeny(t, e.check(t, value, req{headers: map[string]string{"cookie": "session=short"}}))
	if d.status != 401 || !strings.Contains(d.body, "no valid session") {
		t.Errorf("got %d %q, want 401 no valid session", d.status, d.body)
	}
}

func TestCheckSessionStoreDownFailsClosedOrOpenWithoutIdentity(t *testing.T) {
	e := newEnv(t)
	if err := e.sessions.Save(context.Background(), "s1", map[string]string{"user": "u-1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	closed := chain.Interceptor{Type: chain.TypeSession}
	open := chain.Interceptor{Type: chain.TypeSession, FailOpen: true}
	spoofed := req{headers: map[string]string{"cookie": "session=s1", "x-user-id": "admin", "x-user-roles": "root"}}
	mustAllow(t, e.check(t, encode(t, closed), spoofed)) // Redis up: the session loads

	e.stopRedis()
	d := mustDeny(t, e.check(t, encode(t, closed), spoofed))
	if d.status != 503 || d.code != codes.Unavailable || !strings.Contains(d.msg, "sessionInterceptor") {
		t.Errorf("fail closed with Redis down: %d %s %q, want 503 Unavailable naming sessionInterceptor", d.status, d.code, d.msg)
	}
	a := mustAllow(t, e.check(t, encode(t, open), spoofed))
	if len(a.upstream) != 0 || !slices.Contains(a.remove, "x-user-id") || !slices.Contains(a.remove, "x-user-roles") {
		t.Errorf("fail open with Redis down: set %v, removed %v; want the identity headers removed, none set", a.upstream, a.remove)
	}
}

// TestCheckSessionRefusesFieldsThatCannotBeHeaders: a session field with
// a line break or another control character never becomes an upstream
// header (issue 22: it did, and Envoy then answered 503 for the whole
// request); the check fails closed, or on a failOpen route passes with no
// identity at all.
func TestCheckSessionRefusesFieldsThatCannotBeHeaders(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for id, user := range map[string]string{"crlf": "ada\r\nx-admin: yes", "lf": "ada\nx", "nul": "ada\x00", "bell": "ada\x07", "huge": strings.Repeat("a", 9<<10)} {
		if err := e.sessions.Save(ctx, id, map[string]string{"user": user, "roles": "dev"}, time.Hour); err != nil {
			t.Fatal(err)
		}
		strict := encode(t, chain.Interceptor{Type: chain.TypeSession})
		if d := mustDeny(t, e.check(t, strict, req{headers: map[string]string{"cookie": "session=" + id}})); d.status != 503 {
			t.Errorf("%s: status %d, want 503 (fail closed)", id, d.status)
		}
		lenient := encode(t, chain.Interceptor{Type: chain.TypeSession, FailOpen: true})
		a := mustAllow(t, e.check(t, lenient, req{headers: map[string]string{"cookie": "session=" + id, "x-user-id": "mallory"}}))
		if len(a.upstream) != 0 || !slices.Contains(a.remove, "x-user-id") || !slices.Contains(a.remove, "x-user-roles") {
			t.Errorf("%s on a failOpen route: set %v, removed %v; want nothing set and both identity headers removed", id, a.upstream, a.remove)
		}
	}
	if err := e.sessions.Save(ctx, "tab", map[string]string{"user": "ada\tlovelace"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	a := mustAllow(t, e.check(t, encode(t, chain.Interceptor{Type: chain.TypeSession}), req{headers: map[string]string{"cookie": "session=tab"}}))
	if a.upstream["x-user-id"] != "ada\tlovelace" {
		t.Errorf("a tab is a valid header character: upstream %v", a.upstream)
	}
}
