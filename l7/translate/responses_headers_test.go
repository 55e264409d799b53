package translate_test

import (
	"slices"
	"strings"
	"testing"

	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// TestHSTSOnlyOnHTTPS: every route of the HTTPS listener carries the
// service's strict-transport-security header (the default for a service
// that set nothing, none for one that turned it off); no route of the
// HTTP listener does.
func TestHSTSOnlyOnHTTPS(t *testing.T) {
	plain := `kind: gateway/service/v1
name: plain
group: g
hosts: [plain.example.com]
listeners: [gw/web, gw/tls]
upstreams: [{name: u, endpoints: ["198.51.100.3:80"]}]
routes:
  - {name: all, prefix: /, target: u}
`
	_, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther, plain))
	s := routesByName(rcs[webTLS])
	want := map[string]string{
		"site/api":  "max-age=3600; includeSubDomains|OVERWRITE_IF_EXISTS_OR_ADD",
		"site/down": "max-age=3600; includeSubDomains|OVERWRITE_IF_EXISTS_OR_ADD",
		"site/ping": "max-age=3600; includeSubDomains|OVERWRITE_IF_EXISTS_OR_ADD",
		"plain/all": "max-age=31536000|OVERWRITE_IF_EXISTS_OR_ADD",
		"other/all": "",
	}
	for n, v := range want {
		if got := headerMap(s[n].GetResponseHeadersToAdd())[model.HSTSHeader]; got != v {
			t.Errorf("%s on HTTPS: hsts %q, want %q", n, got, v)
		}
	}
	for n, rt := range routesByName(rcs[web]) {
		if _, ok := headerMap(rt.GetResponseHeadersToAdd())[model.HSTSHeader]; ok || rt.GetMetadata() != nil {
			t.Errorf("%s on plain HTTP sends strict-transport-security", n)
		}
	}
	// Envoy's own replies (503 without healthy upstream, 401, 429...) get
	// the matched route's value through its metadata, on HTTPS only.
	for n, v := range want {
		md := s[n].GetMetadata().GetFilterMetadata()[translate.RouteMetadataNamespace].GetFields()[translate.HSTSMetadataKey].GetStringValue()
		if wantMD, _, _ := strings.Cut(v, "|"); md != wantMD {
			t.Errorf("%s on HTTPS: hsts metadata %q, want %q", n, md, wantMD)
		}
	}
	hcms, _ := gatewaySet(t, respResolved(t, respGateway, respOther))
	if hcms[web].GetLocalReplyConfig() != nil {
		t.Errorf("the HTTP listener maps local replies: %v", hcms[web].GetLocalReplyConfig())
	}
	ms := hcms[webTLS].GetLocalReplyConfig().GetMappers()
	if len(ms) != 1 || ms[0].GetFilter().GetExtensionFilter() == nil || len(ms[0].GetHeadersToAdd()) != 1 ||
		ms[0].GetHeadersToAdd()[0].GetHeader().GetKey() != model.HSTSHeader ||
		ms[0].GetHeadersToAdd()[0].GetHeader().GetValue() != "%METADATA(ROUTE:tlb:hsts)%" || ms[0].GetStatusCode() != nil {
		t.Errorf("HTTPS local reply mappers = %v, want one adding the route's hsts to every reply", ms)
	}
}

// TestHeaderRulesOnTheirRoutes: the service's rules, then the route's, go
// on the service's routes only; the other service's routes carry none.
func TestHeaderRulesOnTheirRoutes(t *testing.T) {
	_, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	s := routesByName(rcs[webTLS])
	api := s["site/api"]
	req := headerMap(api.GetRequestHeadersToAdd())
	if req["x-env"] != "prod|OVERWRITE_IF_EXISTS_OR_ADD" || req["x-route"] != "api|APPEND_IF_EXISTS_OR_ADD" || len(req) != 2 {
		t.Errorf("site/api request headers = %v", req)
	}
	if !slices.Equal(api.GetRequestHeadersToRemove(), []string{"x-debug"}) {
		t.Errorf("site/api removes %v", api.GetRequestHeadersToRemove())
	}
	if headerMap(api.GetResponseHeadersToAdd())["x-frame-options"] != "DENY|OVERWRITE_IF_EXISTS_OR_ADD" {
		t.Errorf("site/api response headers = %v", api.GetResponseHeadersToAdd())
	}
	if m := headerMap(s["site/main"].GetRequestHeadersToAdd()); m["x-route"] != "" || m["x-env"] == "" {
		t.Errorf("site/main request headers = %v: the service's, not api's", m)
	}
	o := s["other/all"]
	if len(o.GetRequestHeadersToAdd())+len(o.GetRequestHeadersToRemove())+len(o.GetResponseHeadersToRemove()) > 0 ||
		len(headerMap(o.GetResponseHeadersToAdd())) > 0 {
		t.Errorf("other/all carries header rules it never asked for: %v", o)
	}
}

// TestServerHeaderHidden: no listener announces Envoy, and every gateway
// route table removes an upstream's server header.
func TestServerHeaderHidden(t *testing.T) {
	hcms, rcs := gatewaySet(t, respResolved(t, respGateway, respSite, respOther))
	for n, m := range hcms {
		if m.GetServerHeaderTransformation() != hcm.HttpConnectionManager_PASS_THROUGH {
			t.Errorf("%s: server_header_transformation %v", n, m.GetServerHeaderTransformation())
		}
	}
	for n, rc := range rcs {
		if !slices.Equal(rc.GetResponseHeadersToRemove(), []string{translate.ServerHeader}) {
			t.Errorf("%s: response_headers_to_remove %v", n, rc.GetResponseHeadersToRemove())
		}
	}
}
