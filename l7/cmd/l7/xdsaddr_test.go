package main

import (
	"strings"
	"testing"
)

// TestADSNeedsUnixOrMutualTLS (issue 22, finding 2): --xds-addr is a unix
// socket in the pod, or TCP with mutual TLS. Plain TCP is refused,
// loopback included: gateway pods share the node's network, and main let
// any local user fetch the group's keys from 127.0.0.1.
func TestADSNeedsUnixOrMutualTLS(t *testing.T) {
	for addr, want := range map[string]string{
		"unix:///run/tlb/xds.sock": "",
		"127.0.0.1:18000":          "needs mutual TLS",
		"localhost:18000":          "needs mutual TLS",
		"[::1]:18000":              "needs mutual TLS",
		"0.0.0.0:18000":            "needs mutual TLS",
	} {
		network, address, err := xdsListenAddr(addr)
		if err == nil {
			_, err = xdsCredentials(network, address, "", "", "")
		}
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", addr, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: got %v, want %q", addr, err, want)
		}
	}
	if _, err := xdsCredentials("tcp", "10.0.0.1:18000", "cert.pem", "", ""); err == nil {
		t.Error("a partial mutual TLS setting is accepted")
	}
}
