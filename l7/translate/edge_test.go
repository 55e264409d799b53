package translate_test

import (
	"regexp"
	"slices"
	"testing"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tracev3 "github.com/envoyproxy/go-control-plane/envoy/config/trace/v3"
	stream "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	h2m "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_to_metadata/v3"

	"github.com/tlbproject/tlb/l7/translate"
)

const edgeGateways = `kind: gateway/gateway/v1
name: gw
group: g
tracing: {otlpEndpoint: "otel.observability.svc:4317", samplePercent: 25}
listeners:
  - {name: guarded, vip: 203.0.113.1, port: 80, protocol: HTTP}
  - {name: open, vip: 203.0.113.2, port: 80, protocol: HTTP}
`

const edgeQuietGateway = `kind: gateway/gateway/v1
name: gw2
group: g
listeners:
  - {name: quiet, vip: 203.0.113.4, port: 80, protocol: HTTP}
`

const edgeApp = `kind: gateway/service/v1
name: app
group: g
hosts: [app.example.com]
listeners: [gw/guarded]
upstreams:
  - {name: u, endpoints: ["198.51.100.1:80"]}
  - {name: v2, endpoints: ["198.51.100.9:80"]}
routes:
  - {name: ws, prefix: /ws, target: u, websocket: true, timeout: "off"}
  - {name: api, prefix: /api, target: u}
  - name: default
    prefix: /
    target: u
    canary:
      upstream: v2
      header: {name: x-canary, value: "1"}
      cookie: {name: ab, value: b}
      percent: 20
`

const edgeQuiet = `kind: gateway/service/v1
name: quiet
group: g
hosts: [quiet.example.com]
listeners: [gw/guarded, gw2/quiet]
accessLog: "off"
upstreams: [{name: u, endpoints: ["198.51.100.3:80"]}]
routes:
  - {name: all, prefix: /, target: u}
`

const edgeOpen = `kind: gateway/service/v1
name: open
group: g
hosts: [open.example.com]
listeners: [gw/open]
upstreams: [{name: u, endpoints: ["198.51.100.4:80"]}]
routes:
  - {name: all, prefix: /, target: u}
`

const (
	guardedL = "http-203.0.113.1-80"
	openL    = "http-203.0.113.2-80"
	quietL   = "http-203.0.113.4-80"
)

// TestAccessLogEverywhereButOffService: every gateway listener logs JSON
// to stdout, skipping requests marked off; only the listeners serving
// the service with accessLog: off run header_to_metadata, first, and only
// that service's routes set the marker.
func TestAccessLogEverywhereButOffService(t *testing.T) {
	hcms, rcs := gatewaySet(t, resolveDocs(t, edgeGateways, edgeQuietGateway, edgeApp, edgeQuiet, edgeOpen))
	for _, l := range []string{guardedL, openL, quietL} {
		als := hcms[l].GetAccessLog()
		if len(als) != 1 {
			t.Fatalf("%s: %d access logs, want 1", l, len(als))
		}
		var out stream.StdoutAccessLog
		if err := als[0].GetTypedConfig().UnmarshalTo(&out); err != nil {
			t.Fatalf("%s: not the stdout logger: %v", l, err)
		}
		fields := out.GetLogFormat().GetJsonFormat().GetFields()
		for k, op := range map[string]string{"request_id": "%REQ(X-REQUEST-ID)%", "trace_id": "%TRACE_ID%",
			"client": "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%", "vip": "%DOWNSTREAM_LOCAL_ADDRESS%", "host": "%REQ(:AUTHORITY)%",
			"route": "%ROUTE_NAME%", "upstream": "%UPSTREAM_CLUSTER%", "status": "%RESPONSE_CODE%", "response_flags": "%RESPONSE_FLAGS%",
			"duration_ms": "%DURATION%", "user_agent": "%REQ(USER-AGENT)%", "bytes_sent": "%BYTES_SENT%"} {
			if fields[k].GetStringValue() != op {
				t.Errorf("%s: %s = %q, want %q", l, k, fields[k].GetStringValue(), op)
			}
		}
		mf := als[0].GetFilter().GetMetadataFilter()
		m := mf.GetMatcher()
		// Envoy's metadata filter ignores invert: log without the key, or
		// when it is "on", which no route writes.
		if !mf.GetMatchIfKeyNotFound().GetValue() || m.GetInvert() || m.GetFilter() != translate.AccessLogNamespace ||
			len(m.GetPath()) != 1 || m.GetPath()[0].GetKey() != translate.AccessLogKey || m.GetValue().GetStringMatch().GetExact() != translate.AccessLogOn {
			t.Errorf("%s: filter %v; want: log unless %s.%s is set (to anything but %q)", l, als[0].GetFilter(), translate.AccessLogNamespace, translate.AccessLogKey, translate.AccessLogOn)
		}
	}
	for l, want := range map[string]bool{guardedL: true, quietL: true, openL: false} {
		names := filterNames(hcms[l])
		if got := slices.Contains(names, translate.HeaderToMetadataFilter); got != want {
			t.Errorf("%s: header_to_metadata %v, want %v (filters %v)", l, got, want, names)
		}
		if want && names[0] != translate.HeaderToMetadataFilter {
			t.Errorf("%s: header_to_metadata is not first: %v", l, names)
		}
	}
	for l, rts := range map[string][]string{guardedL: {"quiet/all"}, quietL: {"quiet/all"}} {
		rt := routesByName(rcs[l])["quiet/all"]
		c := perRoute[h2m.Config](t, rt, translate.HeaderToMetadataFilter)
		rules := c.GetRequestRules()
		if len(rules) != 1 || rules[0].GetOnHeaderPresent().GetValue() != translate.AccessLogOff || rules[0].GetOnHeaderMissing().GetValue() != translate.AccessLogOff ||
			rules[0].GetOnHeaderMissing().GetMetadataNamespace() != translate.AccessLogNamespace || rules[0].GetOnHeaderMissing().GetKey() != translate.AccessLogKey {
			t.Errorf("%s %v: marker rule = %v", l, rts, c)
		}
	}
	for name, rt := range routesByName(rcs[guardedL]) {
		if name != "quiet/all" && rt.GetTypedPerFilterConfig()[translate.HeaderToMetadataFilter] != nil {
			t.Errorf("%s: carries the access-log-off marker it never asked for", name)
		}
	}
}

// TestWebSocketOnlyOnItsRoute: the route with websocket: true enables the
// upgrade; its listener declares it disabled, so no other route upgrades;
// other listeners do not declare it at all.
func TestWebSocketOnlyOnItsRoute(t *testing.T) {
	hcms, rcs := gatewaySet(t, resolveDocs(t, edgeGateways, edgeQuietGateway, edgeApp, edgeQuiet, edgeOpen))
	ups := hcms[guardedL].GetUpgradeConfigs()
	if len(ups) != 1 || ups[0].GetUpgradeType() != "websocket" || ups[0].GetEnabled() == nil || ups[0].GetEnabled().GetValue() {
		t.Errorf("guarded upgrade_configs = %v, want websocket declared disabled", ups)
	}
	for _, l := range []string{openL, quietL} {
		if len(hcms[l].GetUpgradeConfigs()) != 0 {
			t.Errorf("%s: upgrade_configs %v on a listener without WebSocket routes", l, hcms[l].GetUpgradeConfigs())
		}
	}
	g := routesByName(rcs[guardedL])
	ws := g["app/ws"].GetRoute().GetUpgradeConfigs()
	if len(ws) != 1 || ws[0].GetUpgradeType() != "websocket" || !ws[0].GetEnabled().GetValue() {
		t.Errorf("app/ws upgrade_configs = %v", ws)
	}
	for _, n := range []string{"app/api", "app/default", "quiet/all"} {
		if len(g[n].GetRoute().GetUpgradeConfigs()) != 0 {
			t.Errorf("%s upgrades though it did not ask", n)
		}
	}
	// timeout: "off" is a disabled request timeout; the idle timeout
	// still ends a silent stream.
	a := g["app/ws"].GetRoute()
	if a.GetTimeout() == nil || a.GetTimeout().AsDuration() != 0 || a.GetIdleTimeout().AsDuration().Minutes() != 10 {
		t.Errorf("app/ws timeout %v idle %v, want 0s (off) and the 10m default", a.GetTimeout(), a.GetIdleTimeout())
	}
	if g["app/api"].GetRoute().GetTimeout().AsDuration().Minutes() != 1 {
		t.Errorf("app/api timeout %v, want the 1m default", g["app/api"].GetRoute().GetTimeout())
	}
}

// TestTracingOnlyWhereConfigured: the listeners of the gateway with a
// tracing block export to its collector's cluster; the other gateway's
// listener has no tracing, and there is one collector cluster.
func TestTracingOnlyWhereConfigured(t *testing.T) {
	r := resolveDocs(t, edgeGateways, edgeQuietGateway, edgeApp, edgeQuiet, edgeOpen)
	hcms, _ := gatewaySet(t, r)
	for _, l := range []string{guardedL, openL} {
		tr := hcms[l].GetTracing()
		if tr.GetProvider().GetName() != translate.OpenTelemetryTracer || tr.GetRandomSampling().GetValue() != 25 {
			t.Fatalf("%s: tracing = %v", l, tr)
		}
		var otel tracev3.OpenTelemetryConfig
		if err := tr.GetProvider().GetTypedConfig().UnmarshalTo(&otel); err != nil {
			t.Fatal(err)
		}
		if otel.GetGrpcService().GetEnvoyGrpc().GetClusterName() != translate.TracingClusterName("gw") || otel.GetServiceName() != "tlb-gateway-gw" {
			t.Errorf("%s: exporter = %v", l, &otel)
		}
	}
	if hcms[quietL].GetTracing() != nil {
		t.Errorf("gw2 has no tracing block, yet its listener traces: %v", hcms[quietL].GetTracing())
	}
	var collectors []*cluster.Cluster
	for _, c := range translate.Clusters(r, "g") {
		if c.GetName() == translate.TracingClusterName("gw") || c.GetName() == translate.TracingClusterName("gw2") {
			collectors = append(collectors, c)
		}
	}
	if len(collectors) != 1 || collectors[0].GetName() != translate.TracingClusterName("gw") || collectors[0].GetType() != cluster.Cluster_STRICT_DNS ||
		collectors[0].GetTypedExtensionProtocolOptions()["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"] == nil {
		t.Errorf("collector clusters = %v, want gw's alone, DNS, HTTP/2", collectors)
	}
}

// TestCanaryRoutes: a header copy and a cookie copy of the route come
// before it and send to the canary; the route itself splits 80/20; a
// cookie copy matches the pair, not a longer name or value.
func TestCanaryRoutes(t *testing.T) {
	_, rcs := gatewaySet(t, resolveDocs(t, edgeGateways, edgeQuietGateway, edgeApp, edgeQuiet, edgeOpen))
	var names []string
	var vh []*route.Route
	for _, v := range rcs[guardedL].GetVirtualHosts() {
		if v.GetName() == "app.example.com" {
			vh = v.GetRoutes()
		}
	}
	for _, rt := range vh {
		names = append(names, rt.GetName())
	}
	hdr, ck := translate.CanaryRouteName("app/default", "header"), translate.CanaryRouteName("app/default", "cookie")
	if !slices.Equal(names, []string{"app/api", "app/ws", hdr, ck, "app/default"}) {
		t.Fatalf("route order = %v", names)
	}
	g := routesByName(rcs[guardedL])
	h := g[hdr]
	if hm := h.GetMatch().GetHeaders(); len(hm) != 1 || hm[0].GetName() != "x-canary" || hm[0].GetStringMatch().GetExact() != "1" ||
		h.GetRoute().GetCluster() != "app/v2" || h.GetMatch().GetPrefix() != "/" {
		t.Errorf("header copy = %v", h)
	}
	c := g[ck]
	hm := c.GetMatch().GetHeaders()
	if len(hm) != 1 || hm[0].GetName() != "cookie" || c.GetRoute().GetCluster() != "app/v2" {
		t.Fatalf("cookie copy = %v", c)
	}
	re := regexp.MustCompile("^(?:" + hm[0].GetStringMatch().GetSafeRegex().GetRegex() + ")$") // Envoy matches the whole value
	for v, want := range map[string]bool{"ab=b": true, "x=1; ab=b": true, "ab=b; y=2": true, "ab=bb": false, "xab=b": false, "ab=a": false, "": false} {
		if re.MatchString(v) != want {
			t.Errorf("cookie %q matched %v, want %v", v, !want, want)
		}
	}
	wc := g["app/default"].GetRoute().GetWeightedClusters().GetClusters()
	if len(wc) != 2 || wc[0].GetName() != "app/u" || wc[0].GetWeight().GetValue() != 80 || wc[1].GetName() != "app/v2" || wc[1].GetWeight().GetValue() != 20 {
		t.Errorf("split = %v, want app/u 80, app/v2 20", wc)
	}
	if g["app/api"].GetRoute().GetCluster() != "app/u" {
		t.Errorf("app/api goes to %v; only the route with the canary splits", g["app/api"].GetRoute().GetClusterSpecifier())
	}
}
