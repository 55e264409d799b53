package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/model"
)

// TestDNSResolversFlag: --dns-resolvers takes IP[:PORT] items (port 53
// by default); a name or a bad port is an error naming the flag.
func TestDNSResolversFlag(t *testing.T) {
	opts, err := dnsResolversOption(model.Options{}, "127.0.23.53:5353, 10.96.0.10,[fd00::a]:53")
	if err != nil || fmt.Sprint(opts.DNSResolvers) != "[127.0.23.53:5353 10.96.0.10:53 [fd00::a]:53]" {
		t.Fatalf("resolvers %v, %v", opts.DNSResolvers, err)
	}
	if opts, err := dnsResolversOption(model.Options{}, ""); err != nil || opts.DNSResolvers != nil {
		t.Fatalf("none: %v, %v", opts.DNSResolvers, err)
	}
	for _, bad := range []string{"kube-dns:53", "10.96.0.10:0", "10.96.0.10:dns"} {
		if _, err := dnsResolversOption(model.Options{}, bad); err == nil || !strings.HasPrefix(err.Error(), "--dns-resolvers: ") {
			t.Errorf("%q: %v, want an error naming --dns-resolvers", bad, err)
		}
	}
}
