package gatewaylab

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/l7/drain"
)

// HealthFlags returns Envoy's health flags of endpoint addr in cluster,
// from the admin API's /clusters: "healthy", or flags such as
// "/failed_active_hc" (its active checks fail) and
// "/failed_outlier_check" (ejected by outlier detection).
func HealthFlags(ctx context.Context, g *envoyproc.Gateway, cluster, addr string) (string, error) {
	code, body, err := g.AdminGet(ctx, "/clusters")
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("envoy admin /clusters: %d", code)
	}
	prefix := cluster + "::" + addr + "::health_flags::"
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			return v, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("envoy has no endpoint %s in cluster %s", addr, cluster)
}

// Excluded reports whether Envoy's flags keep an endpoint out of load
// balancing: a failed active check or an outlier ejection.
func Excluded(flags string) bool {
	return strings.Contains(flags, "failed_active_hc") || strings.Contains(flags, "failed_outlier_check")
}

// Accepted is how many client connections Envoy's listeners have
// accepted, counted as the preStop drain counts them
// (drain.ReadConnections: the admin and stats listeners left out).
func Accepted(ctx context.Context, g *envoyproc.Gateway) (int, error) {
	code, body, err := g.AdminGet(ctx, "/stats?filter=downstream_cx_total")
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("envoy admin /stats: %d", code)
	}
	c, err := drain.ReadConnections(bytes.NewReader(body))
	return c.Accepted, err
}
