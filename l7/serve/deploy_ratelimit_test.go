package serve_test

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// l7Flags returns the flags of the container named l7 in the first
// document of a deploy/ manifest, as name -> value.
func l7Flags(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(b), "\n---\n")
	var obj struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name    string   `json:"name"`
						Command []string `json:"command"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, c := range obj.Spec.Template.Spec.Containers {
		if c.Name != "l7" {
			continue
		}
		flags := map[string]string{}
		for _, a := range c.Command {
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
				flags[k] = v
			} else if strings.HasPrefix(a, "--") {
				flags[a] = "true" // a bool flag
			}
		}
		return flags
	}
	t.Fatalf("%s: no l7 container", file)
	return nil
}

// TestDeployRateLimitConfigMatchesGateways: the l7 beside the rate limit
// service resolves the group as the gateways' l7 does (same group, DSL,
// namespaces, rate limit service), so the limits it serves are those of
// the routes the gateways serve; its xDS is on loopback.
func TestDeployRateLimitConfigMatchesGateways(t *testing.T) {
	gw := l7Flags(t, "../../deploy/envoy/gateway.yaml")
	rl := l7Flags(t, "../../deploy/envoy/ratelimit.yaml")
	for _, k := range []string{"--group", "--config", "--in-cluster", "--namespaces", "--catch-all-namespaces", "--cert-dir", "--ratelimit-address"} {
		if gw[k] != rl[k] {
			t.Errorf("%s: gateways %q, rate limit service's l7 %q", k, gw[k], rl[k])
		}
	}
	if gw["--ratelimit-address"] == "" {
		t.Error("the gateways have no --ratelimit-address")
	}
	if !strings.HasPrefix(rl["--ratelimit-xds-listen"], "127.0.0.1:") {
		t.Errorf("--ratelimit-xds-listen = %q, want loopback", rl["--ratelimit-xds-listen"])
	}
	for _, k := range []string{"--authz-listen", "--authz-redis", "--authz-redis-password-file"} {
		if gw[k] == "" {
			t.Errorf("the gateways' l7 has no %s", k)
		}
	}
}
