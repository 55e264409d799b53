package ratelimit_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/ratelimit"
	"github.com/tlbproject/tlb/l7/translate/ratelimitenvoy"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// exampleGroup is a gateway group's routes, listed out of order on purpose.
func exampleGroup() []ratelimit.RouteLimits {
	return []ratelimit.RouteLimits{
		{Route: "shop/checkout/0", Local: &ratelimit.Local{RequestsPerSecond: 5, Burst: 10},
			Global: &ratelimit.Global{PerClientIP: &ratelimit.Quota{Requests: 30, Unit: ratelimit.Minute}}},
		{Route: "api/search/1", Global: &ratelimit.Global{
			PerClientIP: &ratelimit.Quota{Requests: 10, Unit: ratelimit.Second},
			PerRoute:    &ratelimit.Quota{Requests: 5000, Unit: ratelimit.Hour},
		}},
		{Route: "static/0"},
		{Route: "api/login/0", Local: &ratelimit.Local{RequestsPerSecond: 0.5, Burst: 3},
			Global: &ratelimit.Global{PerRoute: &ratelimit.Quota{Requests: 100, Unit: ratelimit.Second}}},
	}
}

func TestGoldenServiceConfig(t *testing.T) {
	cfg, err := ratelimit.Service("edge", exampleGroup())
	if err != nil {
		t.Fatal(err)
	}
	y, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "edge.ratelimit.yaml", y)
	if cfg.FileName() != "edge.yaml" {
		t.Errorf("FileName = %q", cfg.FileName())
	}
	// Same limits in another order: same bytes.
	g := exampleGroup()
	g[0], g[3] = g[3], g[0]
	cfg2, _ := ratelimit.Service("edge", g)
	if y2, _ := cfg2.YAML(); !bytes.Equal(y, y2) {
		t.Errorf("route order changes the service config:\n%s\nvs\n%s", y, y2)
	}
}

func TestServiceRefusesBadInput(t *testing.T) {
	if _, err := ratelimit.Service("Edge Group", nil); err == nil {
		t.Error("a domain with a space and capitals was accepted")
	}
	if _, err := ratelimit.Service("edge", []ratelimit.RouteLimits{{Route: "a", Global: &ratelimit.Global{}}}); err == nil {
		t.Error("an empty global limit was accepted")
	}
	cfg, err := ratelimit.Service("empty", nil)
	if err != nil {
		t.Fatal(err)
	}
	if y, _ := cfg.YAML(); string(y) != "descriptors: []\ndomain: empty\n" {
		t.Errorf("a group without global limits gives %q, want an empty domain the service still loads", y)
	}
}

// TestGoldenEnvoyConfig records the filters and the limited routes of the
// example group as Envoy's config dump would show them.
func TestGoldenEnvoyConfig(t *testing.T) {
	var out bytes.Buffer
	add := func(title string, m proto.Message) {
		j, err := protojson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		y, err := yaml.JSONToYAML(j)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("# " + title + "\n" + string(y) + "---\n")
	}
	add("HTTP filter (local)", ratelimitenvoy.LocalFilter())
	add("HTTP filter (global)", ratelimitenvoy.GlobalFilter("edge"))
	add("cluster", ratelimitenvoy.Cluster("ratelimit.tlb-system.svc.cluster.local", 8081))
	for _, l := range exampleGroup() {
		r := forwarding(l.Route)
		ratelimitenvoy.Apply(r, l)
		add("route "+l.Route, &route.Route{Name: r.GetName(), TypedPerFilterConfig: r.GetTypedPerFilterConfig(),
			Action: &route.Route_Route{Route: &route.RouteAction{RateLimits: r.GetRoute().GetRateLimits()}}})
	}
	golden(t, "edge.envoy.yaml", out.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test ./l7/ratelimit -update and review the diff.\ngot:\n%s", path, got)
	}
}
