package serve_test

import (
	"os"
	"path/filepath"
	"testing"

	bootstrap "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/resource_monitors/downstream_connections/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/resource_monitors/fixed_heap/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/xds"
)

// TestDeployBootstrap parses deploy/envoy/bootstrap.yaml strictly as an
// Envoy v3 Bootstrap and runs ValidateAll on it and on every Any inside.
// (No Envoy binary here: this is the check that stands in for
// "envoy --mode validate".)
func TestDeployBootstrap(t *testing.T) {
	y, err := os.ReadFile("../../deploy/envoy/bootstrap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	var b bootstrap.Bootstrap
	if err := (protojson.UnmarshalOptions{}).Unmarshal(j, &b); err != nil {
		t.Fatalf("bootstrap.yaml is not an Envoy v3 bootstrap: %v", err)
	}
	if err := validateMessage(&b); err != nil {
		t.Fatalf("bootstrap.yaml fails validation: %v", err)
	}
	if got := b.GetAdmin().GetAddress().GetSocketAddress().GetAddress(); got != "127.0.0.1" {
		t.Errorf("admin listens on %q, want loopback", got)
	}
	cs := b.GetStaticResources().GetClusters()
	if len(cs) != 1 || b.GetDynamicResources().GetAdsConfig().GetGrpcServices()[0].GetEnvoyGrpc().GetClusterName() != cs[0].GetName() {
		t.Fatalf("ADS must point at the one static cluster")
	}
	ep := cs[0].GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()
	if len(ep) != 1 || ep[0].GetEndpoint().GetAddress().GetSocketAddress().GetAddress() != "127.0.0.1" {
		t.Errorf("ADS must go to the l7 beside Envoy (127.0.0.1) only, got %v", ep)
	}
	if md := b.GetNode().GetMetadata().GetFields(); md[xds.MetaSchema].GetStringValue() != xds.Schema || b.GetNode().GetCluster() == "" {
		t.Errorf("node must name its group and schema %s: %v", xds.Schema, b.GetNode())
	}
	if len(b.GetOverloadManager().GetResourceMonitors()) == 0 {
		t.Error("no overload manager")
	}
}

// TestDeployConfigParses: the example DSL shipped in deploy/ is valid.
func TestDeployConfigParses(t *testing.T) {
	files, _ := filepath.Glob("../../deploy/envoy/config/*.yaml")
	if len(files) == 0 {
		t.Fatal("no deploy config files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dsl.Parse(filepath.Base(f), b); err != nil {
			t.Errorf("%v", err)
		}
	}
}
