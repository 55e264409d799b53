package xds_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
)

// streamSeries renders the series of name whose node label is node, as
// sorted `labels=value` lines without the group and node labels.
func streamSeries(t *testing.T, reg *prometheus.Registry, name, node string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			mine := false
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "node":
					mine = l.GetValue() == node
				case "group":
					if l.GetValue() != "edge" {
						t.Errorf("%s has group %q, want edge", name, l.GetValue())
					}
				default:
					ls = append(ls, l.GetName()+"="+l.GetValue())
				}
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			if mine {
				out = append(out, fmt.Sprintf("%s=%v", strings.Join(ls, ","), v))
			}
		}
	}
	sort.Strings(out)
	return out
}

// waitSeries waits until the node's series of name are want.
func waitSeries(t *testing.T, reg *prometheus.Registry, name, node string, want []string) {
	t.Helper()
	sort.Strings(want)
	deadline := time.Now().Add(10 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		if got = streamSeries(t, reg, name, node); strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s{node=%q}:\n got %v\nwant %v", name, node, got, want)
}

func perType(format string, version func(typ string) string) []string {
	var out []string
	for _, typ := range allTypes {
		out = append(out, fmt.Sprintf(format, typ, version(typ)))
	}
	return out
}

// TestStreamMetricsServedAckedNacked: per gateway stream, the versions
// served and acknowledged follow a real ADS client through an ACKed sync,
// a NACKed update and the stream's end.
func TestStreamMetricsServedAckedNacked(t *testing.T) {
	r := startServer(t, "")
	cfg := edgeConfig("198.51.100.20:8080")
	r.pub.Publish(context.Background(), cfg)
	c := newSotw(t, dial(t, r.addr), node("gw-1", "edge", "gateway", schema))
	got := sotwSync(t, c)
	version := func(typ string) string { return got[typ].GetVersionInfo() }

	waitSeries(t, r.reg, "tlb_l7_xds_stream_acked_version_info", "gw-1", perType("type=%s,version=%s=1", version))
	waitSeries(t, r.reg, "tlb_l7_xds_stream_served_version_info", "gw-1", perType("type=%s,version=%s=1", version))
	waitSeries(t, r.reg, "tlb_l7_xds_stream_in_sync", "gw-1", perType("type=%s%s=1", func(string) string { return "" }))
	waitSeries(t, r.reg, "tlb_l7_xds_stream_nacks_total", "gw-1", nil)

	// A new listener version; the client rejects it.
	cfg.Gateways[0].Listeners = append(cfg.Gateways[0].Listeners, cfg.Gateways[0].Listeners[0])
	cfg.Gateways[0].Listeners[2].Name, cfg.Gateways[0].Listeners[2].Port = "alt", 8081
	r.pub.Publish(context.Background(), cfg)
	resp, err := c.next(5 * time.Second)
	if err != nil || resp.GetTypeUrl() != resource.ListenerType {
		t.Fatalf("want a listener update, got %v %v", resp.GetTypeUrl(), err)
	}
	c.request(resource.ListenerType, nil, version(resource.ListenerType), resp.GetNonce(),
		&rpcstatus.Status{Code: int32(codes.InvalidArgument), Message: "test: listener refused"})
	waitSeries(t, r.reg, "tlb_l7_xds_stream_nacks_total", "gw-1", []string{"type=" + resource.ListenerType + "=1"})
	served := func(typ string) string {
		if typ == resource.ListenerType {
			return resp.GetVersionInfo()
		}
		return version(typ)
	}
	waitSeries(t, r.reg, "tlb_l7_xds_stream_served_version_info", "gw-1", perType("type=%s,version=%s=1", served))
	waitSeries(t, r.reg, "tlb_l7_xds_stream_acked_version_info", "gw-1", perType("type=%s,version=%s=1", version))
	waitSeries(t, r.reg, "tlb_l7_xds_stream_in_sync", "gw-1", perType("type=%s%s", func(typ string) string {
		switch typ {
		case resource.ListenerType:
			return "=0" // it holds the version before the one it refused
		case resource.RouteType:
			return "=0" // the new version's routes wait for the refused listener
		}
		return "=1"
	}))

	// The stream ends: its series go.
	c.cancel()
	for _, name := range []string{"tlb_l7_xds_stream_served_version_info", "tlb_l7_xds_stream_acked_version_info",
		"tlb_l7_xds_stream_in_sync", "tlb_l7_xds_stream_nacks_total"} {
		waitSeries(t, r.reg, name, "gw-1", nil)
	}
}
