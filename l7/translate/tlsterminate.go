package translate

import (
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"

	"github.com/tlbproject/tlb/l7/model"
)

// terminateTLS is the transport socket of a TLS listener's entry that
// terminates (model.SNITarget.Certificate): the certificate by SDS, the
// listener's TLS versions and ciphers, and no ALPN, since what is
// forwarded is the plain TCP stream, whatever protocol it carries.
func terminateTLS(secret string, el model.EnvoyListener) *core.TransportSocket {
	ctx := &tls.DownstreamTlsContext{CommonTlsContext: &tls.CommonTlsContext{
		TlsParams:                      downstreamTLSParams(el.TLSPolicy),
		TlsCertificateSdsSecretConfigs: []*tls.SdsSecretConfig{{Name: secret, SdsConfig: adsSource()}},
	}}
	return &core.TransportSocket{
		Name:       wellknown.TransportSocketTLS,
		ConfigType: &core.TransportSocket_TypedConfig{TypedConfig: mustAny(ctx)},
	}
}
