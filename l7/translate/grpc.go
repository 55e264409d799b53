package translate

import (
	"slices"
	"strings"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// GRPCListeners returns one api_listener per exact host of the group's
// services, named by the host, so a proxyless gRPC client dialing
// "xds:///host" finds the group's routes. Wildcard hosts get none.
func GRPCListeners(r model.Resolved, group string) []*listener.Listener {
	var hosts []string
	for _, s := range proxylessServices(r, group) {
		for _, h := range s.Hosts {
			if !strings.Contains(h, "*") {
				hosts = append(hosts, h)
			}
		}
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	out := make([]*listener.Listener, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, grpcListener(group, h))
	}
	return out
}

func grpcListener(group, host string) *listener.Listener {
	m := &hcm.HttpConnectionManager{
		StatPrefix: host,
		RouteSpecifier: &hcm.HttpConnectionManager_Rds{Rds: &hcm.Rds{
			ConfigSource: adsSource(), RouteConfigName: RouteConfigName(group),
		}},
		HttpFilters: []*hcm.HttpFilter{routerFilter()},
	}
	return &listener.Listener{
		Name:        host,
		ApiListener: &listener.ApiListener{ApiListener: mustAny(m)},
	}
}
