package translate

import (
	accesslog "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	stream "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	h2m "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_to_metadata/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlbproject/tlb/l7/model"
)

// Access logs: every gateway HTTP listener writes one JSON line per
// request to stdout. A service with accessLog: off is left out by a
// marker in the request's dynamic metadata, set per route by Envoy's
// header_to_metadata filter (empty at the listener, a rule on the
// routes of that service alone) and read by the logger's metadata
// filter.
const (
	// HeaderToMetadataFilter is the HTTP filter name of Envoy's
	// header_to_metadata filter, the key of its per-route rules.
	HeaderToMetadataFilter = "envoy.filters.http.header_to_metadata"
	// AccessLogNamespace and AccessLogKey hold the marker; AccessLogOff
	// is its value on the routes whose requests are not logged.
	AccessLogNamespace = "tlb.access_log"
	AccessLogKey       = "log"
	AccessLogOff       = "off"
	// AccessLogOn is the only marker value the logger logs; no route
	// sets it (see gatewayAccessLog).
	AccessLogOn        = "on"
	stdoutAccessLogger = "envoy.access_loggers.stdout"
)

// accessLogFields are the JSON keys of a log line and Envoy's command
// operators that fill them.
var accessLogFields = map[string]string{
	"time":           "%START_TIME%",
	"request_id":     "%REQ(X-REQUEST-ID)%",
	"trace_id":       "%TRACE_ID%",
	"traceparent":    "%REQ(TRACEPARENT)%",
	"client":         "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%",
	"vip":            "%DOWNSTREAM_LOCAL_ADDRESS%",
	"host":           "%REQ(:AUTHORITY)%",
	"method":         "%REQ(:METHOD)%",
	"path":           "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
	"protocol":       "%PROTOCOL%",
	"route":          "%ROUTE_NAME%",
	"upstream":       "%UPSTREAM_CLUSTER%",
	"upstream_host":  "%UPSTREAM_HOST%",
	"status":         "%RESPONSE_CODE%",
	"response_flags": "%RESPONSE_FLAGS%",
	"bytes_received": "%BYTES_RECEIVED%",
	"bytes_sent":     "%BYTES_SENT%",
	"duration_ms":    "%DURATION%",
	"user_agent":     "%REQ(USER-AGENT)%",
}

// hasAccessLogOff reports whether a service of svcs turns its logs off.
func hasAccessLogOff(svcs []model.Service) bool {
	for _, s := range svcs {
		if s.AccessLogOff {
			return true
		}
	}
	return false
}

// gatewayAccessLog is the stdout JSON logger of a gateway listener,
// skipping the requests whose marker says off (a request without the
// marker is logged). Envoy's metadata filter logs a request without the
// key (match_if_key_not_found) and, with the key, only when its value
// matches; it ignores the matcher's invert (Envoy 1.40 logged the
// requests marked off with "invert: true, value: off"), so the value
// matched is AccessLogOn, which no route writes.
func gatewayAccessLog() []*accesslog.AccessLog {
	fields := make(map[string]any, len(accessLogFields))
	for k, v := range accessLogFields {
		fields[k] = v
	}
	format, err := structpb.NewStruct(fields)
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	out := &stream.StdoutAccessLog{AccessLogFormat: &stream.StdoutAccessLog_LogFormat{LogFormat: &core.SubstitutionFormatString{
		Format: &core.SubstitutionFormatString_JsonFormat{JsonFormat: format},
	}}}
	return []*accesslog.AccessLog{{
		Name: stdoutAccessLogger,
		Filter: &accesslog.AccessLogFilter{FilterSpecifier: &accesslog.AccessLogFilter_MetadataFilter{MetadataFilter: &accesslog.MetadataFilter{
			Matcher: &matcher.MetadataMatcher{
				Filter: AccessLogNamespace,
				Path:   []*matcher.MetadataMatcher_PathSegment{{Segment: &matcher.MetadataMatcher_PathSegment_Key{Key: AccessLogKey}}},
				Value: &matcher.ValueMatcher{MatchPattern: &matcher.ValueMatcher_StringMatch{StringMatch: &matcher.StringMatcher{
					MatchPattern: &matcher.StringMatcher_Exact{Exact: AccessLogOn}}}},
			},
			MatchIfKeyNotFound: wrapBool(true),
		}}},
		ConfigType: &accesslog.AccessLog_TypedConfig{TypedConfig: mustAny(out)},
	}}
}

// headerToMetadataFilter carries no rule at the listener: only the
// routes of a service with its log off set the marker.
func headerToMetadataFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: HeaderToMetadataFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&h2m.Config{})}}
}

// accessLogOffPerRoute sets the marker on every request of the route:
// x-request-id, present or missing, yields the constant "off" (a value
// set in on_header_present replaces the header's).
func accessLogOffPerRoute() *anypb.Any {
	kv := func() *h2m.Config_KeyValuePair {
		return &h2m.Config_KeyValuePair{MetadataNamespace: AccessLogNamespace, Key: AccessLogKey, Value: AccessLogOff, Type: h2m.Config_STRING}
	}
	return mustAny(&h2m.Config{RequestRules: []*h2m.Config_Rule{{
		Header:          "x-request-id",
		OnHeaderPresent: kv(),
		OnHeaderMissing: kv(),
	}}})
}
