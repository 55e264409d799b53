package xds

import (
	"context"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/tlbproject/tlb/l7/translate"
)

// DefaultTrustDomain is the SPIFFE trust domain of client certificates
// when Options.TrustDomain is empty.
const DefaultTrustDomain = "tlb.io"

// Identity is who is at the other end of a stream, as the transport proves
// it, never as the client's node message claims.
//
//   - Local: the stream came over the unix socket in the gateway pod's own
//     volume (or, for tests and development, plain TCP on loopback, which
//     the server allows only without a non-loopback address). The Envoy
//     beside this l7 may be served as a gateway or a gRPC client of the
//     server's group.
//   - A TLS client certificate with one URI SAN (an X.509 SVID has
//     exactly one) of the form spiffe://<trust domain>/tlb/l7/<kind>/<group>
//     grants that kind of that group; a certificate with several URI SANs
//     grants nothing. A "grpc" identity is never served as a gateway, so it
//     never receives a Secret; an identity of group A never receives
//     anything of group B.
type Identity struct {
	Local  bool
	Grants []Grant
	// Name is what logs say about the client (its address or SANs).
	Name string
}

// Grant is one kind of client of one group an identity may act as.
type Grant struct {
	Kind  translate.Kind
	Group string
}

// SPIFFEID returns the URI SAN that grants kind of group.
func SPIFFEID(trustDomain string, kind translate.Kind, group string) string {
	return fmt.Sprintf("spiffe://%s/tlb/l7/%s/%s", trustDomain, kind, group)
}

// Allows reports whether the identity may be served as kind of group.
func (id Identity) Allows(kind translate.Kind, group string) bool {
	if id.Local {
		return true
	}
	for _, g := range id.Grants {
		if g.Kind == kind && g.Group == group {
			return true
		}
	}
	return false
}

// identityOf reads the identity of a stream's peer from its context.
func identityOf(ctx context.Context, trustDomain string) Identity {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Identity{Name: "unknown peer"}
	}
	if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
		id := Identity{Name: p.Addr.String()}
		if len(ti.State.VerifiedChains) == 0 || len(ti.State.VerifiedChains[0]) == 0 {
			return id
		}
		var sans []string
		for _, u := range ti.State.VerifiedChains[0][0].URIs {
			sans = append(sans, u.String())
		}
		id.Name = p.Addr.String() + " " + strings.Join(sans, ",")
		// An X.509 SVID carries exactly one URI SAN, its SPIFFE ID: a
		// certificate with more is not an identity, and grants nothing.
		if len(sans) != 1 {
			return id
		}
		if g, ok := parseSPIFFE(sans[0], trustDomain); ok {
			id.Grants = append(id.Grants, g)
		}
		return id
	}
	switch a := p.Addr.(type) {
	case *net.UnixAddr:
		return Identity{Local: true, Name: "unix socket"}
	case *net.TCPAddr:
		return Identity{Local: a.IP.IsLoopback(), Name: a.String()}
	}
	return Identity{Name: p.Addr.String()}
}

// parseSPIFFE reads spiffe://<td>/tlb/l7/<kind>/<group>.
func parseSPIFFE(uri, trustDomain string) (Grant, bool) {
	rest, ok := strings.CutPrefix(uri, "spiffe://"+trustDomain+"/tlb/l7/")
	if !ok {
		return Grant{}, false
	}
	kind, group, ok := strings.Cut(rest, "/")
	if !ok || group == "" || strings.Contains(group, "/") {
		return Grant{}, false
	}
	switch translate.Kind(kind) {
	case translate.Gateway, translate.GRPC:
		return Grant{Kind: translate.Kind(kind), Group: group}, true
	}
	return Grant{}, false
}
