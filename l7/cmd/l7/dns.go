package main

import (
	"fmt"

	"github.com/tlbproject/tlb/l7/model"
)

const dnsResolversUsage = "comma-separated IP[:PORT] of the DNS servers gateways ask for upstreams named by DNS (endpoints or targets host:port) and other clusters named by DNS; default: the system's (/etc/resolv.conf, in Kubernetes the pod's)"

// dnsResolversOption adds the DNS servers of --dns-resolvers to opts; an
// empty value leaves the system's resolver.
func dnsResolversOption(opts model.Options, v string) (model.Options, error) {
	rs, err := model.ParseDNSResolvers(v)
	if err != nil {
		return opts, fmt.Errorf("--dns-resolvers: %w", err)
	}
	opts.DNSResolvers = rs
	return opts, nil
}
