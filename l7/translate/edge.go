package translate

import (
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/tlbproject/tlb/l7/model"
)

// webSocket is the upgrade type Envoy proxies for a route with
// websocket: true.
const webSocket = "websocket"

func hasWebSocket(svcs []model.Service) bool {
	for _, s := range svcs {
		for _, r := range s.Routes {
			if r.WebSocket {
				return true
			}
		}
	}
	return false
}

// edgeHCM completes a gateway listener's connection manager: the JSON
// access log always; WebSocket declared but disabled when a route of the
// listener upgrades (that route enables it: a route's setting overrides
// the connection manager's, see Envoy's "HTTP upgrades"); tracing when
// the listener's gateway exports spans.
func edgeHCM(m *hcm.HttpConnectionManager, f httpFilters) {
	m.AccessLog = gatewayAccessLog()
	if f.websocket {
		m.UpgradeConfigs = []*hcm.HttpConnectionManager_UpgradeConfig{{UpgradeType: webSocket, Enabled: wrapperspb.Bool(false)}}
	}
	m.Tracing = hcmTracing(f.tracing)
	// With use_remote_address, the client is the address this many hops
	// from the right of X-Forwarded-For once Envoy appended the peer's;
	// 0 (the default) is the peer itself, whatever the client sends.
	m.XffNumTrustedHops = f.xffTrustedHops
}

// routeUpgrades is a route's upgrade_configs: WebSocket enabled when it
// asks, nothing otherwise (the connection manager's disabled default).
func routeUpgrades(r model.Route) []*route.RouteAction_UpgradeConfig {
	if !r.WebSocket {
		return nil
	}
	return []*route.RouteAction_UpgradeConfig{{UpgradeType: webSocket, Enabled: wrapperspb.Bool(true)}}
}

// forRoutes drops from f what only the connection manager reads (the
// upgrade declaration, tracing, trusted hops), so routes are shared between listeners
// that differ only there.
func (f httpFilters) forRoutes() httpFilters {
	f.websocket, f.tracing, f.xffTrustedHops = false, listenerTracing{}, 0
	return f
}
