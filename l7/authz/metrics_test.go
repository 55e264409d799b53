package authz

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

func TestCheckMetricsCountDecisionsAndLatency(t *testing.T) {
	e := newEnv(t)
	if err := e.sessions.Save(context.Background(), "s1", map[string]string{"user": "u"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	hang := e.ext(chain.TransportGRPC, map[string]string{"mode": "hang"})
	hang.Timeout = chain.Duration(20 * time.Millisecond)
	value := encode(t, chain.Interceptor{Type: chain.TypeSession}, chain.Interceptor{Type: chain.TypeCSRF}, hang)
	mustAllow(t, e.check(t, encode(t, chain.Interceptor{Type: chain.TypeSession}), req{headers: map[string]string{"cookie": "session=s1"}}))
	mustDeny(t, e.check(t, value, req{method: "POST", headers: map[string]string{"cookie": "session=s1"}}))
	mustDeny(t, e.check(t, value, req{method: "GET", headers: map[string]string{"cookie": "session=s1"}}))

	want := `
# HELP tlb_l7_authz_decisions_total Interceptor decisions, by interceptor (type, or external:<id>) and decision (allow, deny, error).
# TYPE tlb_l7_authz_decisions_total counter
tlb_l7_authz_decisions_total{decision="allow",interceptor="csrfInterceptor"} 1
tlb_l7_authz_decisions_total{decision="allow",interceptor="external:todolist"} 0
tlb_l7_authz_decisions_total{decision="allow",interceptor="sessionInterceptor"} 3
tlb_l7_authz_decisions_total{decision="deny",interceptor="csrfInterceptor"} 1
tlb_l7_authz_decisions_total{decision="deny",interceptor="external:todolist"} 0
tlb_l7_authz_decisions_total{decision="deny",interceptor="sessionInterceptor"} 0
tlb_l7_authz_decisions_total{decision="error",interceptor="csrfInterceptor"} 0
tlb_l7_authz_decisions_total{decision="error",interceptor="external:todolist"} 1
tlb_l7_authz_decisions_total{decision="error",interceptor="sessionInterceptor"} 0
`
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(want), "tlb_l7_authz_decisions_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(e.reg, "tlb_l7_authz_interceptor_duration_seconds"); n != 3 {
		t.Errorf("latency series: %d, want one per interceptor (3)", n)
	}
}
