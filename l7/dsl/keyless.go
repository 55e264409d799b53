package dsl

import (
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// WithoutKeys makes the directory read no certificate, key, JWT key or CA
// file: each certificate a gateway names is standIn, and the JWT keys and
// CA bundles are the stand-ins Parse checks with. The services and
// gateways are otherwise those of a normal load, so an l7 that serves no
// gateway (the rate limit service's) resolves the group as the gateways'
// l7 does, holding no secret of it.
func (d *Dir) WithoutKeys(standIn tlscert.StandIn) *Dir {
	d.standIn = &standIn
	return d
}

// standInResult is what a file contributes when no key is read.
func (d *Dir) standInResult(file string, doc *Doc) fileResult {
	out := &Doc{}
	var certs []model.Certificate
	if doc.Service != nil {
		s := withCAStandIns(withStandIns(*doc.Service, doc.JWTFiles))
		out.Service = &s
	}
	if doc.Gateway != nil {
		g := gatewayWithCAStandIns(*doc.Gateway)
		out.Gateway = &g
		for _, cf := range doc.CertFiles {
			certs = append(certs, model.Certificate{Name: cf.Name, Gateway: g.ID(), Origin: model.Origin(file),
				Chain: d.standIn.Chain, Key: model.NewPrivateKey(d.standIn.Key)})
		}
	}
	return fileResult{doc: out, certs: certs}
}
