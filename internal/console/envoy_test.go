package console

import (
	"os"
	"strings"
	"testing"
)

// TestEnvoyStats reads what a real Envoy 1.40 served on
// /stats/prometheus (testdata/envoy-stats.txt: a static listener; the
// xDS series, which only an Envoy fed by l7 has, appended in Envoy's
// format: text readouts as a text_value label).
func TestEnvoyStats(t *testing.T) {
	b, err := os.ReadFile("testdata/envoy-stats.txt")
	if err != nil {
		t.Fatal(err)
	}
	c := Component{Role: RoleEnvoy}
	if err := applyMetrics(&c, strings.NewReader(string(b))); err != nil {
		t.Fatalf("parse a real Envoy's stats: %v", err)
	}
	st := c.EnvoyState
	if st == nil || !st.Connected || st.State != "live" || st.ListenersActive != 1 || st.LDSVersion != "7-a1b2" || st.CDSVersion != "7-c3d4" {
		t.Errorf("Envoy state %+v", st)
	}
	if len(c.Listeners) != 1 || c.Listeners[0].Labels != "127.0.0.1:19080" {
		t.Errorf("listeners %+v", c.Listeners)
	}
}

// TestL7StreamsPerGateway: an l7 server's per-node stream series give
// each gateway's acknowledged versions and whether they are current.
func TestL7StreamsPerGateway(t *testing.T) {
	metrics := `# TYPE tlb_l7_xds_stream_served_version_info gauge
tlb_l7_xds_stream_served_version_info{group="edge",node="gw-1",type="listener",version="v2"} 1
tlb_l7_xds_stream_served_version_info{group="edge",node="gw-1",type="cluster",version="v2"} 1
tlb_l7_xds_stream_served_version_info{group="edge",node="gw-2",type="listener",version="v2"} 1
# TYPE tlb_l7_xds_stream_acked_version_info gauge
tlb_l7_xds_stream_acked_version_info{group="edge",node="gw-1",type="listener",version="v2"} 1
tlb_l7_xds_stream_acked_version_info{group="edge",node="gw-1",type="cluster",version="v2"} 1
tlb_l7_xds_stream_acked_version_info{group="edge",node="gw-2",type="listener",version="v1"} 1
# TYPE tlb_l7_xds_stream_in_sync gauge
tlb_l7_xds_stream_in_sync{group="edge",node="gw-1",type="listener"} 1
tlb_l7_xds_stream_in_sync{group="edge",node="gw-1",type="cluster"} 1
tlb_l7_xds_stream_in_sync{group="edge",node="gw-2",type="listener"} 0
`
	c := Component{Role: RoleL7, Name: "edge-a"}
	if err := applyMetrics(&c, strings.NewReader(metrics)); err != nil {
		t.Fatal(err)
	}
	if len(c.Envoys) != 2 || c.Envoys[0].Node != "gw-1" || !c.Envoys[0].InSync() || c.Envoys[1].InSync() {
		t.Fatalf("gateways %+v", c.Envoys)
	}
	if got := c.Envoys[1].Types[0]; got.Acked != "v1" || got.Served != "v2" {
		t.Errorf("gw-2 listener %+v", got)
	}
	var b strings.Builder
	if err := WriteText(&b, BuildView(Snapshot{FileMode: true, Components: []Component{c}})); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gateway gw-1 (group edge): acknowledged cluster v2, listener v2\n",
		"gateway gw-2 (group edge): acknowledged listener v1 (not current: sent v2)\n",
		`l7 edge-a gateway gw-2: has not acknowledged the current listener config (acknowledged "v1", sent "v2")`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestEnvoyVersionsAgainstL7: an Envoy whose applied LDS and CDS versions
// are those its l7 serves now is current; one still on an older version
// is a problem, named with the version it holds.
func TestEnvoyVersionsAgainstL7(t *testing.T) {
	l7 := Component{Role: RoleL7, Name: "gw-1", Ready: true, Snapshots: []SnapshotVersion{
		{Key: "gateway/edge", Type: typeListener, Version: "g1-aaaa"},
		{Key: "gateway/edge", Type: typeCluster, Version: "g1-cccc"},
	}}
	envoy := func(name, lds string) Component {
		return Component{Role: RoleEnvoy, Name: name, Ready: true,
			EnvoyState: &EnvoyStats{Connected: true, State: "live", LDSVersion: lds, CDSVersion: "g1-cccc"}}
	}
	v := BuildView(Snapshot{FileMode: true, Components: []Component{l7, envoy("gw-1", "g1-aaaa"), envoy("gw-2", "g1-old")}})
	var b strings.Builder
	if err := WriteText(&b, v); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LDS g1-aaaa (current), CDS g1-cccc (current)", "LDS g1-old (NOT current), CDS g1-cccc (current)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	var got []string
	for _, p := range v.Problems {
		got = append(got, p.Source+"|"+p.What)
	}
	if len(got) != 1 || got[0] != "envoy gw-2|Envoy has not applied the config l7 serves now (LDS g1-old, CDS g1-cccc)" {
		t.Errorf("problems %q", got)
	}
}
