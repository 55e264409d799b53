package translate

import (
	"strings"

	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	jwtauthn "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	tlsinspector "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"

	"github.com/tlbproject/tlb/l7/model"
)

// Edge limits, after Envoy's "configuring Envoy as an edge proxy" guide.
const (
	bufferLimit        = 32 * 1024
	connIdleTimeout    = time.Hour
	streamIdleTimeout  = 5 * time.Minute
	requestHdrsTimeout = 10 * time.Second
	maxStreamsPerConn  = 100
	tcpIdleTimeout     = time.Hour
)

// Listeners returns the Envoy listeners of a group's gateways: one per
// declared VIP:port, bound on the VIP itself with freebind (the VIP may be
// bound on the node after Envoy starts), each with its own route
// configuration, so a host is served only where its service declares it.
func Listeners(r model.Resolved, group string) []*listener.Listener {
	byName := map[string]model.Service{}
	for _, s := range servicesOf(r, group) {
		byName[s.Name] = s
	}
	var out []*listener.Listener
	for _, el := range r.Listeners {
		if el.Group == group {
			f, jwt := listenerFilters(el, byName)
			out = append(out, gatewayListener(el, f, jwt))
		}
	}
	return out
}

// listenerFilters returns the HTTP filters of a listener, and its
// jwt_authn configuration when it has the filter: none for TCP and for a
// listener that only redirects to HTTPS.
func listenerFilters(el model.EnvoyListener, byName map[string]model.Service) (httpFilters, *jwtauthn.JwtAuthentication) {
	return listenerFiltersOf(el, servicesOn(el, byName))
}

// listenerFiltersOf is listenerFilters of the listener's services svcs.
func listenerFiltersOf(el model.EnvoyListener, svcs []model.Service) (httpFilters, *jwtauthn.JwtAuthentication) {
	if !servesRoutes(el) {
		return httpFilters{}, nil
	}
	f := filtersOf(svcs)
	f.globalRL = globalRateLimitDomain(el, svcs)
	f.proto = el.Protocol
	f.redirectPort = listenerRedirectPort(el, svcs)
	f.tracing = tracingOf(el)
	f.xffTrustedHops = el.XFFTrustedHops
	if !f.jwt {
		return f, nil
	}
	return f, jwtAuthentication(svcs)
}

func gatewayListener(el model.EnvoyListener, f httpFilters, jwt *jwtauthn.JwtAuthentication) *listener.Listener {
	l := &listener.Listener{
		Name: el.Name,
		Address: &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
			Address: el.VIP.String(), PortSpecifier: &core.SocketAddress_PortValue{PortValue: el.Port},
		}}},
		Freebind:                      wrapBool(true),
		PerConnectionBufferLimitBytes: u32(bufferLimit),
	}
	switch el.Protocol {
	case model.HTTP:
		l.FilterChains = []*listener.FilterChain{{Filters: []*listener.Filter{hcmFilter(statPrefix(el.Name), el.Name, f, jwt)}}}
	case model.HTTPS:
		l.ListenerFilters = []*listener.ListenerFilter{{
			Name:       wellknown.TlsInspector,
			ConfigType: &listener.ListenerFilter_TypedConfig{TypedConfig: mustAny(&tlsinspector.TlsInspector{})},
		}}
		for _, c := range el.TLS {
			// A certificate without names is the default chain: no
			// match, so Envoy serves it when no other chain matches.
			var match *listener.FilterChainMatch
			if len(c.ServerNames) > 0 {
				match = &listener.FilterChainMatch{ServerNames: c.ServerNames}
			}
			l.FilterChains = append(l.FilterChains, &listener.FilterChain{
				Name:             c.Certificate,
				FilterChainMatch: match,
				Filters:          []*listener.Filter{forwardClientCert(hcmFilter(statPrefix(el.Name), chainRouteConfig(el, c), f, jwt), el.ClientCertificate)},
				TransportSocket:  downstreamTLS(c.Certificate, el),
			})
		}
	case model.TCP:
		ts := el.Forward
		if el.Target != "" {
			ts = []model.WeightedCluster{{Cluster: el.Target, Weight: 1}}
		}
		l.FilterChains = []*listener.FilterChain{{Filters: []*listener.Filter{tcpProxy(statPrefix(el.Name), ts)}}}
	case model.UDP:
		udpListener(l, el)
	case model.TLS:
		l.ListenerFilters = []*listener.ListenerFilter{{
			Name:       wellknown.TlsInspector,
			ConfigType: &listener.ListenerFilter_TypedConfig{TypedConfig: mustAny(&tlsinspector.TlsInspector{})},
		}}
		l.FilterChains = passthroughChains(el)
	}
	return l
}

// servesRoutes reports whether a listener runs the HTTP connection
// manager with its own route configuration: HTTP and HTTPS, except an
// HTTP listener that only redirects to HTTPS.
func servesRoutes(el model.EnvoyListener) bool {
	return (el.Protocol == model.HTTP || el.Protocol == model.HTTPS) && !el.RedirectHTTPS
}

func downstreamTLS(secret string, el model.EnvoyListener) *core.TransportSocket {
	ctx := &tls.DownstreamTlsContext{CommonTlsContext: &tls.CommonTlsContext{
		TlsParams:                      downstreamTLSParams(el.TLSPolicy),
		TlsCertificateSdsSecretConfigs: []*tls.SdsSecretConfig{{Name: secret, SdsConfig: adsSource()}},
		AlpnProtocols:                  []string{"h2", "http/1.1"},
	}}
	applyClientCertificate(ctx, el.ClientCertificate)
	return &core.TransportSocket{
		Name:       wellknown.TransportSocketTLS,
		ConfigType: &core.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)},
	}
}

func routerFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{
		Name:       wellknown.Router,
		ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&router.Router{})},
	}
}

// statPrefix is the stat prefix of a listener's connection manager or TCP
// proxy: its name without dots. Envoy's Prometheus output takes the text
// up to the first dot as the prefix label and puts the rest into the
// series name, so "http-203.0.113.10-443" became the series
// envoy_http_0_113_10_443_downstream_rq_xx{envoy_http_conn_manager_prefix="http-127"}:
// one series name per VIP and port, which no dashboard or alert selects.
func statPrefix(listenerName string) string {
	return strings.NewReplacer(".", "_", ":", "_").Replace(listenerName)
}

// hcmFilter is the HTTP connection manager of a gateway listener, with the
// edge defaults: the client address from the socket, underscores in header
// names refused, paths normalised, bounded streams and timeouts.
func hcmFilter(statPrefix, routeConfig string, f httpFilters, jwt *jwtauthn.JwtAuthentication) *listener.Filter {
	m := &hcm.HttpConnectionManager{
		CodecType:  hcm.HttpConnectionManager_AUTO,
		StatPrefix: statPrefix,
		RouteSpecifier: &hcm.HttpConnectionManager_Rds{Rds: &hcm.Rds{
			ConfigSource: adsSource(), RouteConfigName: routeConfig,
		}},
		HttpFilters:                  f.chain(jwt),
		UseRemoteAddress:             wrapBool(true),
		NormalizePath:                wrapBool(true),
		MergeSlashes:                 true,
		PathWithEscapedSlashesAction: hcm.HttpConnectionManager_UNESCAPE_AND_REDIRECT,
		ServerHeaderTransformation:   hcm.HttpConnectionManager_PASS_THROUGH, // no "server: envoy"; see hideServerHeader
		StreamIdleTimeout:            dur(streamIdleTimeout),
		RequestHeadersTimeout:        dur(requestHdrsTimeout),
		CommonHttpProtocolOptions: &core.HttpProtocolOptions{
			IdleTimeout:                  dur(connIdleTimeout),
			HeadersWithUnderscoresAction: core.HttpProtocolOptions_REJECT_REQUEST,
		},
		Http2ProtocolOptions: &core.Http2ProtocolOptions{
			MaxConcurrentStreams:        u32(maxStreamsPerConn),
			InitialStreamWindowSize:     u32(64 * 1024),
			InitialConnectionWindowSize: u32(1024 * 1024),
		},
	}
	if f.jwt || f.rbac {
		m.LocalReplyConfig = authLocalReply(f.rbac)
	}
	if f.proto == model.HTTPS {
		m.LocalReplyConfig = withLocalReplyHSTS(m.LocalReplyConfig)
	}
	edgeHCM(m, f)
	return &listener.Filter{
		Name:       wellknown.HTTPConnectionManager,
		ConfigType: &listener.Filter_TypedConfig{TypedConfig: mustAny(m)},
	}
}
