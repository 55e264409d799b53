package translate

import (
	"slices"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// Secrets returns the SDS secrets the group's HTTPS listeners (and TLS
// listeners that terminate) refer to,
// with the key inline: the only place a key leaves model.PrivateKey, and
// only towards the gateway over the ADS stream.
func Secrets(r model.Resolved, group string) []*tls.Secret {
	var want []string
	for _, l := range r.Listeners {
		if l.Group != group {
			continue
		}
		want = append(want, model.ListenerCertificateNames(l)...)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	var out []*tls.Secret
	for _, c := range r.Config.Certificates {
		if _, found := slices.BinarySearch(want, c.Name); !found {
			continue
		}
		out = append(out, &tls.Secret{
			Name: c.Name,
			Type: &tls.Secret_TlsCertificate{TlsCertificate: &tls.TlsCertificate{
				CertificateChain: &core.DataSource{Specifier: &core.DataSource_InlineBytes{InlineBytes: c.Chain}},
				PrivateKey:       &core.DataSource{Specifier: &core.DataSource_InlineBytes{InlineBytes: c.Key.Reveal()}},
			}},
		})
	}
	return out
}
