package envoyproc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tlbproject/tlb/l7/authz/sessionstore"
)

// TestRedisUsersFromTheManifest (issue 22): the Redis of deploy/envoy,
// started from its own script, gives each client an ACL user that reaches
// its own keys and commands only. l7 reads sessions (through the session
// store it uses) and cannot write one; the rate limit service counts under
// ratelimit:* and can neither create nor read a session; the login
// service's user writes sessions and cannot touch counters; nobody gets in
// without a user. On main one password (the default user) did all of it,
// so the rate limiter's credentials could create sessions.
func TestRedisUsersFromTheManifest(t *testing.T) {
	r := StartRedisT(t, "127.0.25.10")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	as := func(user string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: r.Addr, Username: user, Password: r.Passwords[user], MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	for _, u := range []string{"tlb-l7", "tlb-ratelimit", "tlb-sessions"} {
		if r.Passwords[u] == "" {
			t.Fatalf("the manifest has no ACL user %s (users: %v)", u, r.Passwords)
		}
	}
	l7, rl, login := as("tlb-l7"), as("tlb-ratelimit"), as("tlb-sessions")

	type step struct {
		who  string
		do   func() error
		want string // "" allowed, else in the error
	}
	steps := []step{
		{"login creates a session", func() error { return login.HSet(ctx, "session:s1", "user", "ada").Err() }, ""},
		{"login sets its expiry", func() error { return login.Expire(ctx, "session:s1", time.Hour).Err() }, ""},
		{"rate limiter counts", func() error { return rl.IncrBy(ctx, "ratelimit:edge_route_x_1", 1).Err() }, ""},
		{"rate limiter expires its counter", func() error { return rl.Expire(ctx, "ratelimit:edge_route_x_1", time.Minute).Err() }, ""},
		{"rate limiter creates a session", func() error { return rl.HSet(ctx, "session:forged", "user", "root").Err() }, "NOPERM"},
		{"rate limiter reads a session", func() error { return rl.HGetAll(ctx, "session:s1").Err() }, "NOPERM"},
		{"rate limiter counts under a session's key", func() error { return rl.IncrBy(ctx, "session:s1", 1).Err() }, "NOPERM"},
		{"rate limiter lists keys", func() error { return rl.Keys(ctx, "*").Err() }, "NOPERM"},
		{"l7 writes a session", func() error { return l7.HSet(ctx, "session:forged", "user", "root").Err() }, "NOPERM"},
		{"l7 deletes a session", func() error { return l7.Del(ctx, "session:s1").Err() }, "NOPERM"},
		{"l7 reads a counter", func() error { return l7.Get(ctx, "ratelimit:edge_route_x_1").Err() }, "NOPERM"},
		{"login touches a counter", func() error { return login.IncrBy(ctx, "ratelimit:edge_route_x_1", 1000).Err() }, "NOPERM"},
		{"login flushes everything", func() error { return login.FlushAll(ctx).Err() }, "NOPERM"},
		{"l7 reconfigures Redis", func() error { return l7.ConfigSet(ctx, "requirepass", "x").Err() }, "NOPERM"},
		{"no user at all", func() error {
			c := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1})
			defer func() { _ = c.Close() }()
			return c.HSet(ctx, "session:forged", "user", "root").Err()
		}, "NOAUTH"},
		{"another user's password", func() error {
			c := redis.NewClient(&redis.Options{Addr: r.Addr, Username: "tlb-sessions", Password: r.Passwords["tlb-ratelimit"], MaxRetries: -1})
			defer func() { _ = c.Close() }()
			return c.Ping(ctx).Err()
		}, "WRONGPASS"},
	}
	for _, s := range steps {
		err := s.do()
		switch {
		case s.want == "" && err != nil:
			t.Errorf("%s: %v", s.who, err)
		case s.want != "" && (err == nil || !strings.Contains(err.Error(), s.want)):
			t.Errorf("%s: got %v, want %s", s.who, err, s.want)
		}
	}
	// l7 reads sessions through the very store it uses (pipelined HGETALL).
	store := sessionstore.NewBatched(sessionstore.NewClient(r.Addr, "tlb-l7", r.Passwords["tlb-l7"]), "", sessionstore.BatchOptions{})
	runCtx, stop := context.WithCancel(ctx)
	go store.Run(runCtx)
	defer stop()
	fields, ok, err := store.Load(ctx, "s1")
	if err != nil || !ok || fields["user"] != "ada" {
		t.Fatalf("l7's session store as tlb-l7: %v %v %v", fields, ok, err)
	}
	if m, err := login.HGetAll(ctx, "session:forged").Result(); err != nil || len(m) != 0 {
		t.Fatalf("a forged session exists: %v %v", m, err)
	}
}
