package translate

import (
	accesslog "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	celfilter "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/filters/cel/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlbproject/tlb/l7/model"
)

// Route metadata carrying a route's HSTS header value, so replies Envoy
// makes itself on an HTTPS listener (no healthy upstream, timeouts,
// jwt_authn's 401, rbac's 403, local_ratelimit's 429), which route
// header rules do not reach, get the same header.
const (
	RouteMetadataNamespace = "tlb"
	HSTSMetadataKey        = "hsts"
)

// hstsFromRoute is the header value formatted from the matched route's
// metadata: empty, and so not added, when the route has none (HSTS off,
// or no route matched).
const hstsFromRoute = "%METADATA(ROUTE:" + RouteMetadataNamespace + ":" + HSTSMetadataKey + ")%"

// setHSTSMetadata records the route's HSTS value in its metadata,
// keeping any other metadata the route has.
func setHSTSMetadata(rt *route.Route, value string) {
	if rt.Metadata == nil {
		rt.Metadata = &core.Metadata{}
	}
	if rt.Metadata.FilterMetadata == nil {
		rt.Metadata.FilterMetadata = map[string]*structpb.Struct{}
	}
	md := rt.Metadata.FilterMetadata[RouteMetadataNamespace]
	if md == nil {
		md = &structpb.Struct{}
		rt.Metadata.FilterMetadata[RouteMetadataNamespace] = md
	}
	if md.Fields == nil {
		md.Fields = map[string]*structpb.Value{}
	}
	md.Fields[HSTSMetadataKey] = structpb.NewStringValue(value)
}

// withLocalReplyHSTS adds the route's HSTS header to every local reply of
// an HTTPS listener: to each existing mapper (the first that matches is
// the only one applied) and in a last mapper matching every reply. The
// configuration is the same for every HTTPS listener, so a service's
// HSTS setting never rewrites a listener.
func withLocalReplyHSTS(c *hcm.LocalReplyConfig) *hcm.LocalReplyConfig {
	if c == nil {
		c = &hcm.LocalReplyConfig{}
	} else {
		c = proto.Clone(c).(*hcm.LocalReplyConfig)
	}
	hsts := func() *core.HeaderValueOption { return overwrite(model.HSTSHeader, hstsFromRoute) }
	for _, m := range c.Mappers {
		m.HeadersToAdd = append(m.HeadersToAdd, hsts())
	}
	c.Mappers = append(c.Mappers, &hcm.ResponseMapper{
		Filter: &accesslog.AccessLogFilter{FilterSpecifier: &accesslog.AccessLogFilter_ExtensionFilter{
			ExtensionFilter: &accesslog.ExtensionFilter{
				Name:       "envoy.access_loggers.extension_filters.cel",
				ConfigType: &accesslog.ExtensionFilter_TypedConfig{TypedConfig: mustAny(&celfilter.ExpressionFilter{Expression: "true"})},
			}}},
		HeadersToAdd: []*core.HeaderValueOption{hsts()},
	})
	return c
}
