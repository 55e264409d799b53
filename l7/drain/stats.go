package drain

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// StatsListenerPrefix is the stat prefix of the gateway's read-only
// stats listener (l7/bootstrap): scrapes are not client traffic to wait for.
const StatsListenerPrefix = "tlb_stats"

// Connections are an Envoy's client connections, summed over its
// listeners but the admin and stats listeners.
type Connections struct {
	// Active are open now (listener.*.downstream_cx_active).
	Active int
	// Accepted were ever accepted (listener.*.downstream_cx_total).
	Accepted int
}

// ReadConnections parses Envoy's text stats ("name: value" lines) and
// sums the listeners' downstream_cx_active and downstream_cx_total,
// leaving out the admin and stats listeners and the per-worker copies of
// the counters (listener.X.worker_N.*).
func ReadConnections(r io.Reader) (Connections, error) {
	var c Connections
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ": ")
		if !ok || !strings.HasPrefix(name, "listener.") || strings.HasPrefix(name, "listener.admin.") ||
			strings.HasPrefix(name, "listener."+StatsListenerPrefix+".") || strings.Contains(name, ".worker_") {
			continue
		}
		var sum *int
		switch {
		case strings.HasSuffix(name, ".downstream_cx_active"):
			sum = &c.Active
		case strings.HasSuffix(name, ".downstream_cx_total"):
			sum = &c.Accepted
		default:
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil {
			return Connections{}, fmt.Errorf("parse envoy stat %q: %w", sc.Text(), err)
		}
		*sum += n
	}
	return c, sc.Err()
}
