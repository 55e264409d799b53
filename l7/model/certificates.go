package model

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// Certificates belong to the gateway declaration that carries them
// (Certificate.Gateway). Resolve serves a certificate only to the listeners
// of its own gateway, and only once that gateway is accepted: a gateway
// rejected for any reason frees nothing another gateway could pick up by
// name, and a gateway of another group (or another file) that uses the
// same name never reaches a key it did not declare.

// ownedCertificates indexes certs by their gateway declaration and name.
// A certificate without chain or key, without gateway, or declared twice
// by one gateway is reported and left out.
func ownedCertificates(certs []Certificate, problems *[]Problem) map[GatewayID]map[string]Certificate {
	owned := map[GatewayID]map[string]Certificate{}
	bad := func(c Certificate, field, msg string) {
		*problems = append(*problems, Problem{Kind: "certificate", Name: c.Name, Origin: c.Origin, Field: field, Msg: msg, Rejected: true})
	}
	for _, c := range certs {
		switch {
		case c.Gateway.Name == "":
			bad(c, "gateway", "declared by no gateway: not served")
		case owned[c.Gateway][c.Name].Name != "":
			bad(c, "name", fmt.Sprintf("declared twice by gateway %q", c.Gateway.Name))
		case len(c.Chain) == 0 || c.Key.Empty():
			bad(c, "key", "certificate chain and key are both required")
		default:
			if owned[c.Gateway] == nil {
				owned[c.Gateway] = map[string]Certificate{}
			}
			owned[c.Gateway][c.Name] = c
		}
	}
	return owned
}

// certificateNames returns the names of a gateway's own certificates.
func certificateNames(own map[string]Certificate) map[string]bool {
	out := make(map[string]bool, len(own))
	for n := range own {
		out[n] = true
	}
	return out
}

// servedCertificates keeps the certificates of accepted gateways, one per
// name: the SDS resource name. Two gateways may use one name only for the
// same chain and key (a Secret several Gateways refer to).
type servedCertificates map[string]Certificate

// conflicts returns a problem for each certificate of g's listeners whose
// name another accepted gateway already serves with other content.
func (s servedCertificates) conflicts(g Gateway, own map[string]Certificate) []Problem {
	var ps []Problem
	for i, l := range g.Listeners {
		for _, ref := range listenerCertificates(l, fmt.Sprintf("listeners[%d]", i)) {
			have, ok := s[ref.name]
			if !ok || sameCertificate(have, own[ref.name]) {
				continue
			}
			ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin,
				Field: ref.field,
				Msg:   fmt.Sprintf("certificate name %q is already served by gateway %q (%s) with another certificate", ref.name, have.Gateway.Name, have.Gateway.Origin), Rejected: true})
		}
	}
	return ps
}

// add records the certificates g's listeners use.
func (s servedCertificates) add(g Gateway, own map[string]Certificate) {
	for _, l := range g.Listeners {
		for _, ref := range listenerCertificates(l, "") {
			if _, ok := s[ref.name]; !ok {
				s[ref.name] = own[ref.name]
			}
		}
	}
}

// sorted returns the served certificates sorted by name.
func (s servedCertificates) sorted() []Certificate {
	out := make([]Certificate, 0, len(s))
	for _, c := range s {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Certificate) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func sameCertificate(a, b Certificate) bool {
	return bytes.Equal(a.Chain, b.Chain) && a.Key.Equal(b.Key)
}
