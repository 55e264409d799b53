package authz

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

// redisCommands returns how many times Redis ran cmd since the last
// CONFIG RESETSTAT, from its own INFO commandstats.
func (e *env) redisCommands(t *testing.T, cmd string) int {
	t.Helper()
	info, err := e.redis.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n := 0
			for _, c := range rest {
				if c < '0' || c > '9' {
					break
				}
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	return 0
}

func TestCheckWithoutInterceptorsTouchesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.sessions.Save(ctx, "sess1", map[string]string{"user": "u-1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := e.redis.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for _, value := range []string{"", "[]"} {
		a := mustAllow(t, e.check(t, value, req{method: "POST", headers: map[string]string{"cookie": "session=sess1"}}))
		if len(a.upstream)+len(a.remove)+len(a.downstream) != 0 {
			t.Errorf("chain %q: allowed with changes %+v, want none", value, a)
		}
	}
	if n := e.redisCommands(t, "hgetall"); n != 0 {
		t.Errorf("Redis ran HGETALL %d times for routes without interceptors", n)
	}
	if g, r := len(e.grpcExt.received()), len(e.restExt.received()); g+r != 0 {
		t.Errorf("external interceptors called (grpc %d, rest %d) for routes without interceptors", g, r)
	}
	// The same request on a session route does reach Redis: the count
	// above can fail.
	mustAllow(t, e.check(t, encode(t, chain.Interceptor{Type: chain.TypeSession}), req{headers: map[string]string{"cookie": "session=sess1"}}))
	if n := e.redisCommands(t, "hgetall"); n != 1 {
		t.Errorf("HGETALL ran %d times for one session check, want 1", n)
	}
}

func TestCheckMalformedContextIsAClearError(t *testing.T) {
	e := newEnv(t)
	for name, tc := range map[string]struct{ value, want string }{
		"not JSON":            {`{session`, "interceptors: want a JSON array"},
		"object, not array":   {`{"type":"cspInterceptor"}`, "interceptors: want a JSON array"},
		"no type":             {`[{"cookie":"sid"}]`, "interceptors[0].type: required"},
		"unknown type":        {`[{"type":"cspInterceptor","policy":"x"},{"type":"jwt"}]`, `interceptors[1].type: unknown interceptor type "jwt"`},
		"unknown field":       {`[{"type":"sessionInterceptor","cokie":"sid"}]`, `interceptors[0].cokie: unknown field`},
		"field of other type": {`[{"type":"cspInterceptor","policy":"x","cookie":"sid"}]`, "interceptors[0].cookie: not a field of cspInterceptor"},
		"bad timeout":         {`[{"type":"csrfInterceptor","timeout":"soon"}]`, `interceptors[0].timeout: bad duration "soon"`},
		"wrong JSON type":     {`[{"type":"csrfInterceptor","allowedOrigins":"https://a"}]`, "interceptors[0].allowedOrigins: want []string"},
		"external no address": {`[{"type":"external","id":"x","transport":"grpc"}]`, `interceptors[0].address: "" is not host:port`},
		"redirect no URL":     {`[{"type":"sessionInterceptor","onMissing":"redirect"}]`, "interceptors[0].redirectURL: required"},
	} {
		t.Run(name, func(t *testing.T) {
			d := mustDeny(t, e.check(t, tc.value, req{}))
			if d.status != 500 || !strings.Contains(d.body, tc.want) || !strings.Contains(d.msg, tc.want) {
				t.Errorf("got %d %s %q / %q, want 500 naming %q", d.status, d.code, d.msg, d.body, tc.want)
			}
		})
	}
}
