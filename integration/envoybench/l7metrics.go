package envoybench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// l7Metrics reads l7's /metrics (its obs listener) and returns the value
// of each sample whose name and labels start with one of prefixes, keyed
// by the sample's text before the value.
func l7Metrics(ctx context.Context, addr string, prefixes ...string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("l7 metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				i := strings.LastIndexByte(line, ' ')
				v, err := strconv.ParseFloat(line[i+1:], 64)
				if err == nil {
					out[line[:i]] = v
				}
			}
		}
	}
	return out, sc.Err()
}

// ackDelays is the count and sum of a histogram of l7: its ACK delays of
// one type, or its publishes' durations.
type ackDelays struct{ count, sum float64 }

// readPushes reads tlb_l7_push_duration_seconds: each publish that
// changed a snapshot, from its start to the snapshot set (l7's resolve,
// translate, validate and swap).
func readPushes(ctx context.Context, addr string) (ackDelays, error) {
	m, err := l7Metrics(ctx, addr, "tlb_l7_push_duration_seconds_count", "tlb_l7_push_duration_seconds_sum")
	if err != nil {
		return ackDelays{}, err
	}
	return ackDelays{count: m["tlb_l7_push_duration_seconds_count"], sum: m["tlb_l7_push_duration_seconds_sum"]}, nil
}

// perEvent is the mean of the observations between two readings (ms).
func perEvent(before, after ackDelays) float64 {
	if n := after.count - before.count; n > 0 {
		return (after.sum - before.sum) * 1000 / n
	}
	return 0
}

const (
	edsType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	rdsType = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
)

func readAckDelays(ctx context.Context, addr, typ string) (ackDelays, error) {
	labels := `{group="edge",type="` + typ + `"}`
	m, err := l7Metrics(ctx, addr, "tlb_l7_xds_ack_delay_seconds_count", "tlb_l7_xds_ack_delay_seconds_sum")
	if err != nil {
		return ackDelays{}, err
	}
	return ackDelays{count: m["tlb_l7_xds_ack_delay_seconds_count"+labels], sum: m["tlb_l7_xds_ack_delay_seconds_sum"+labels]}, nil
}
