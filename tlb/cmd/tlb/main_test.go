package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/tlb/config"
)

func TestDispatch(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("services:\n- {vip: 203.0.113.10, port: 80, realServers: [{address: 198.18.2.2, weight: 70000}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badBGP := filepath.Join(t.TempDir(), "bad-bgp.yaml")
	if err := os.WriteFile(badBGP, []byte("director: {vipRanges: [203.0.113.0/24]}\nservices: []\nbgp: {localASN: 64512, routerID: 198.18.1.2, allowedPrefixes: [198.51.100.0/24], peers: [{address: 198.18.1.1, asn: 64500}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		"no command":                 {args: nil, wantCode: 2, wantErr: "usage:"},
		"unknown command":            {args: []string{"frobnicate"}, wantCode: 2, wantErr: `unknown command "frobnicate"`},
		"run without config":         {args: []string{"run"}, wantCode: 2, wantErr: "--config is required"},
		"run bad log level":          {args: []string{"run", "--config", bad, "--log-level", "loud"}, wantCode: 2, wantErr: "--log-level"},
		"run invalid config":         {args: []string{"run", "--config", bad}, wantCode: 1, wantErr: "services[0].realServers[0].weight"},
		"run bgp outside range":      {args: []string{"run", "--config", badBGP}, wantCode: 1, wantErr: "director.vipRanges[0]: 203.0.113.0/24 is outside bgp.allowedPrefixes"},
		"run missing config":         {args: []string{"run", "--config", bad + ".nope"}, wantCode: 1, wantErr: "read config"},
		"status unknown flag":        {args: []string{"status", "--yaml"}, wantCode: 2, wantErr: "flag provided but not defined"},
		"run bad router id":          {args: []string{"run", "--config", badBGP, "--router-id", "2001:db8::1"}, wantCode: 2, wantErr: `--router-id: "2001:db8::1" is not an IPv4 address`},
		"run metrics host not an IP": {args: []string{"run", "--config", badBGP, "--metrics-host", "$(NODE_IP)"}, wantCode: 2, wantErr: `--metrics-host: metrics host "$(NODE_IP)" is not an IP address`},
		"drain without a node":       {args: []string{"drain"}, wantCode: 2, wantErr: "name one gateway node"},
		"undrain two nodes":          {args: []string{"undrain", "gw-1", "--timeout", "5s", "gw-2"}, wantCode: 2, wantErr: "name one gateway node"},
		"drain flag after the node":  {args: []string{"drain", "gw-1", "--kubeconfig", "/nonexistent"}, wantCode: 1, wantErr: "/nonexistent"},
		"run bad node labels":        {args: []string{"run", "--config", badBGP, "--node-labels", "rack=a,=b"}, wantCode: 2, wantErr: "--node-labels:"},
		"run node labels and name":   {args: []string{"run", "--config", badBGP, "--node-labels", "rack=a", "--node-name", "n1"}, wantCode: 2, wantErr: "exclude each other"},
		"run zero drain timeout":     {args: []string{"run", "--config", badBGP, "--gateway-drain-timeout", "0s"}, wantCode: 2, wantErr: "--gateway-drain-timeout: 0s is not positive"},
		"kubernetes with services in the file": {args: []string{"run", "--config", badBGP, "--kubeconfig", "/nonexistent", "--l4-cluster", "c"},
			wantCode: 1, wantErr: "services: not allowed when services come from the Kubernetes API server"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := dispatch(tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit code = %d; want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr = %q; want it to contain %q", stderr.String(), tc.wantErr)
			}
		})
	}
}

// TestDeployedDirectorFileParses: the site's director file that deploy/
// ships in its ConfigMap (deploy/site) is a valid director file for
// Kubernetes mode.
func TestDeployedDirectorFileParses(t *testing.T) {
	cfg, err := config.LoadSettings(filepath.Join("..", "..", "..", "deploy", "site", "director.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BGP == nil || len(cfg.BGP.Peers) == 0 {
		t.Errorf("deploy/site/director.yaml: no bgp peers: %+v", cfg.BGP)
	}
	// The gateways' weight follows their Envoy's readiness: the stats
	// listener deploy/envoy opens on the node's :9902.
	if h := cfg.Health; h == nil || h.Kind != "http" || h.Port != 9902 || h.Path != "/ready" {
		t.Errorf("deploy/site/director.yaml: health %+v, want HTTP probes of Envoy's :9902/ready", h)
	}
}
