package translate

import (
	"slices"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
)

// downstreamTLSParams returns the TLS parameters of an HTTPS listener: its
// policy, or the defaults (TLS 1.2 to 1.3, ECDHE with AEAD, X25519 and
// P-256). With a TLS 1.3 minimum no TLS 1.2 suite is listed.
func downstreamTLSParams(p *model.TLSPolicy) *tls.TlsParameters {
	out := &tls.TlsParameters{
		TlsMinimumProtocolVersion: tls.TlsParameters_TLSv1_2,
		TlsMaximumProtocolVersion: tls.TlsParameters_TLSv1_3,
		CipherSuites:              model.DefaultCipherSuites(),
		EcdhCurves:                model.ECDHCurves(),
	}
	if p == nil {
		return out
	}
	if p.MinVersion == model.TLS13 {
		out.TlsMinimumProtocolVersion = tls.TlsParameters_TLSv1_3
		out.CipherSuites = nil
	}
	if len(p.CipherSuites) > 0 {
		out.CipherSuites = append([]string(nil), p.CipherSuites...)
	}
	return out
}

// applyClientCertificate makes a listener's TLS context verify client
// certificates against the CA bundle (inline: it is public), require one
// when asked, and let one that does not verify in when AcceptUntrusted.
// Nil leaves ctx as it is: no certificate is requested.
func applyClientCertificate(ctx *tls.DownstreamTlsContext, c *model.ClientCertificate) {
	if c == nil {
		return
	}
	ctx.RequireClientCertificate = wrapBool(c.Required)
	v := &tls.CertificateValidationContext{TrustedCa: inlineBytes(c.CA)}
	if c.AcceptUntrusted {
		v.TrustChainVerification = tls.CertificateValidationContext_ACCEPT_UNTRUSTED
	}
	ctx.CommonTlsContext.ValidationContextType = &tls.CommonTlsContext_ValidationContext{ValidationContext: v}
}

// forwardClientCert sets x-forwarded-client-cert on the connection
// manager of a listener whose client certificates are forwarded: Envoy
// replaces whatever the client sent (SANITIZE_SET) with the verified
// certificate's hash, subject, URI and DNS SANs. Elsewhere Envoy's default,
// SANITIZE, removes the header, so a client can never forge it.
func forwardClientCert(f *listener.Filter, c *model.ClientCertificate) *listener.Filter {
	if c == nil || !c.ForwardDetails {
		return f
	}
	m := &hcm.HttpConnectionManager{}
	if err := f.GetTypedConfig().UnmarshalTo(m); err != nil {
		panic("translate: unpack the connection manager this package built: " + err.Error())
	}
	m.ForwardClientCertDetails = hcm.HttpConnectionManager_SANITIZE_SET
	m.SetCurrentClientCertDetails = &hcm.HttpConnectionManager_SetCurrentClientCertDetails{
		Subject: wrapBool(true), Uri: true, Dns: true,
	}
	return &listener.Filter{Name: f.Name, ConfigType: &listener.Filter_TypedConfig{TypedConfig: mustAny(m)}}
}

// upstreamTLS is the transport socket of a cluster whose upstream asks for
// TLS: SNI, the CA bundle inline, the certificate's DNS SAN checked
// against the verified names (or a URI SAN against the URI names), and ALPN offering only the protocol the
// cluster speaks (h2 for HTTP/2 upstreams, http/1.1 otherwise), so a
// server that negotiates ALPN agrees with the codec Envoy uses. Nil
// without TLS.
func upstreamTLS(u model.Upstream) *core.TransportSocket {
	t := u.TLS
	if t == nil {
		return nil
	}
	alpn := []string{"http/1.1"}
	if u.HTTP2 {
		alpn = []string{"h2"}
	}
	var sans []*tls.SubjectAltNameMatcher
	for _, n := range t.VerifiedNames() {
		sans = append(sans, &tls.SubjectAltNameMatcher{
			SanType: tls.SubjectAltNameMatcher_DNS,
			Matcher: &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_Exact{Exact: n}},
		})
	}
	for _, n := range t.URISubjectAltNames {
		sans = append(sans, &tls.SubjectAltNameMatcher{
			SanType: tls.SubjectAltNameMatcher_URI,
			Matcher: &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_Exact{Exact: n}},
		})
	}
	ctx := &tls.UpstreamTlsContext{
		Sni: t.SNI,
		CommonTlsContext: &tls.CommonTlsContext{
			TlsParams: &tls.TlsParameters{
				TlsMinimumProtocolVersion: tls.TlsParameters_TLSv1_2,
				TlsMaximumProtocolVersion: tls.TlsParameters_TLSv1_3,
			},
			AlpnProtocols: alpn,
			ValidationContextType: &tls.CommonTlsContext_ValidationContext{ValidationContext: &tls.CertificateValidationContext{
				TrustedCa:                 inlineBytes(t.CA),
				MatchTypedSubjectAltNames: sans,
			}},
		},
	}
	return &core.TransportSocket{
		Name:       wellknown.TransportSocketTLS,
		ConfigType: &core.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)},
	}
}

func inlineBytes(b []byte) *core.DataSource {
	return &core.DataSource{Specifier: &core.DataSource_InlineBytes{InlineBytes: append([]byte(nil), b...)}}
}

// cloneListenerTLS deep-copies a listener's TLS settings for the cache.
func cloneListenerTLS(p *model.TLSPolicy, c *model.ClientCertificate) (*model.TLSPolicy, *model.ClientCertificate) {
	if p != nil {
		v := *p
		v.CipherSuites = slices.Clone(v.CipherSuites)
		p = &v
	}
	if c != nil {
		v := *c
		v.CA = slices.Clone(v.CA)
		c = &v
	}
	return p, c
}

// grpcWithoutUpstreamTLS removes from a proxyless gRPC client's set the
// clusters that speak TLS to their endpoints (and their endpoints), and turns the routes to them
// into 503 direct responses (which grpc-go fails as unsupported), so such a
// route never falls through to another. grpc-go takes upstream TLS only
// from certificate provider instances of its own bootstrap and NACKs an
// inline CA, and that NACK stops every cluster of the group, not only this
// one (TestProxylessClientAndUpstreamTLS). out is changed in place; the
// shared cluster list and cached route tables are not.
func grpcWithoutUpstreamTLS(out Resources) {
	dropped := map[string]bool{}
	var kept []types.Resource
	for _, r := range out[resource.ClusterType] {
		if c, ok := r.(*cluster.Cluster); ok && c.GetTransportSocket() != nil {
			dropped[c.GetName()] = true
			continue
		}
		kept = append(kept, r)
	}
	if len(dropped) == 0 {
		return
	}
	out[resource.ClusterType] = kept
	var loads []types.Resource
	for _, r := range out[resource.EndpointType] {
		if e, ok := r.(*endpoint.ClusterLoadAssignment); ok && dropped[e.GetClusterName()] {
			continue
		}
		loads = append(loads, r)
	}
	out[resource.EndpointType] = loads
	for i, r := range out[resource.RouteType] {
		rc, ok := r.(*route.RouteConfiguration)
		if !ok || !slices.ContainsFunc(allRoutes(rc), func(rt *route.Route) bool { return routesTo(rt, dropped) }) {
			continue
		}
		rc = proto.Clone(rc).(*route.RouteConfiguration)
		for _, rt := range allRoutes(rc) {
			if routesTo(rt, dropped) {
				rt.Action = &route.Route_DirectResponse{DirectResponse: &route.DirectResponseAction{Status: 503}}
			}
		}
		out[resource.RouteType][i] = rc
	}
}

func allRoutes(rc *route.RouteConfiguration) []*route.Route {
	var out []*route.Route
	for _, vh := range rc.GetVirtualHosts() {
		out = append(out, vh.GetRoutes()...)
	}
	return out
}

// routesTo reports whether a route sends some traffic to one of clusters.
func routesTo(rt *route.Route, clusters map[string]bool) bool {
	a := rt.GetRoute()
	if clusters[a.GetCluster()] {
		return true
	}
	for _, w := range a.GetWeightedClusters().GetClusters() {
		if clusters[w.GetName()] {
			return true
		}
	}
	return false
}
