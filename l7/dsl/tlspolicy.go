package dsl

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/policy"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// clientCertDoc is a listener's `clientCertificate:` block.
type clientCertDoc struct {
	CAFile            string `json:"caFile"`
	Required          *bool  `json:"required,omitempty"`
	ForwardClientCert bool   `json:"forwardClientCert,omitempty"`
}

// upstreamTLSDoc is an upstream's `tls:` block.
type upstreamTLSDoc struct {
	SNI             string   `json:"sni"`
	CAFile          string   `json:"caFile"`
	SubjectAltNames []string `json:"subjectAltNames,omitempty"`
}

// CAFile names the CA bundle file of one listener's client certificates
// or one upstream's TLS, read by Dir on every load like certificates.
type CAFile struct {
	// Field is the DSL field that names the file, for errors.
	Field string
	Path  string
	// Listener or Upstream is the index of the object it belongs to in
	// the gateway's listeners or the service's upstreams; the other is -1.
	Listener, Upstream int
}

func (l *listenerDoc) tlsModel(f, file string, errs *[]error) (*model.TLSPolicy, *model.ClientCertificate) {
	p := policy.TLSPolicy(l.TLS)
	c := l.ClientCertificate
	if c == nil {
		return p, nil
	}
	if c.CAFile == "" {
		*errs = append(*errs, &FieldError{File: file, Field: f + ".clientCertificate.caFile", Msg: "required: the CA bundle client certificates must chain to"})
	}
	mc := &model.ClientCertificate{Required: true, ForwardDetails: c.ForwardClientCert}
	if c.Required != nil {
		mc.Required = *c.Required
	}
	return p, mc
}

func (u *upstreamTLSDoc) toModel(f, file string, errs *[]error) *model.UpstreamTLS {
	if u == nil {
		return nil
	}
	if u.CAFile == "" {
		*errs = append(*errs, &FieldError{File: file, Field: f + ".caFile", Msg: "required: the CA bundle the endpoints' certificates must chain to"})
	}
	return &model.UpstreamTLS{SNI: u.SNI, SubjectAltNames: u.SubjectAltNames}
}

func (d *serviceDoc) caFiles() []CAFile {
	var out []CAFile
	for i, u := range d.Upstreams {
		if u.TLS != nil {
			out = append(out, CAFile{Field: fmt.Sprintf("upstreams[%d].tls.caFile", i), Path: u.TLS.CAFile, Listener: -1, Upstream: i})
		}
	}
	return out
}

func (d *gatewayDoc) caFiles() []CAFile {
	var out []CAFile
	for i, l := range d.Listeners {
		if l.ClientCertificate != nil {
			out = append(out, CAFile{Field: fmt.Sprintf("listeners[%d].clientCertificate.caFile", i), Path: l.ClientCertificate.CAFile, Listener: i, Upstream: -1})
		}
	}
	return out
}

// standInCA is a throw-away self-signed certificate that lets Parse, which
// reads no files, check an object whose CA bundle is still a file name.
var standInCA = sync.OnceValue(func() []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic("dsl: stand-in CA key: " + err.Error())
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tlb stand-in CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic("dsl: stand-in CA: " + err.Error())
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
})

// withCAStandIns returns a copy of s whose upstreams without a CA bundle
// carry the stand-in.
func withCAStandIns(s model.Service) model.Service {
	s.Upstreams = slices.Clone(s.Upstreams)
	for i, u := range s.Upstreams {
		if u.TLS != nil && len(u.TLS.CA) == 0 {
			t := *u.TLS
			t.CA = standInCA()
			s.Upstreams[i].TLS = &t
		}
	}
	return s
}

// gatewayWithCAStandIns returns a copy of g whose client certificate
// settings without a CA bundle carry the stand-in.
func gatewayWithCAStandIns(g model.Gateway) model.Gateway {
	g.Listeners = slices.Clone(g.Listeners)
	for i, l := range g.Listeners {
		if l.ClientCertificate != nil && len(l.ClientCertificate.CA) == 0 {
			c := *l.ClientCertificate
			c.CA = standInCA()
			g.Listeners[i].ClientCertificate = &c
		}
	}
	return g
}

// loadCAs reads the CA bundles a file names into a copy of its objects
// (doc itself, cached across loads, is not changed). The bundles are
// public; an error names the file, the field and the path.
func (d *Dir) loadCAs(file string, doc *Doc) (*Doc, error) {
	if len(doc.CAFiles) == 0 {
		return doc, nil
	}
	out := *doc
	if doc.Service != nil {
		s := *doc.Service
		s.Upstreams = slices.Clone(s.Upstreams)
		out.Service = &s
	}
	if doc.Gateway != nil {
		g := *doc.Gateway
		g.Listeners = slices.Clone(g.Listeners)
		out.Gateway = &g
	}
	for _, cf := range doc.CAFiles {
		b, err := tlscert.ReadFile(d.abs(cf.Path), d.certDirs)
		if err != nil {
			return nil, &FieldError{File: file, Field: cf.Field, Msg: err.Error()}
		}
		if err := model.CheckCABundle(b); err != nil {
			return nil, &FieldError{File: file, Field: cf.Field, Msg: fmt.Sprintf("%s: %v", cf.Path, err)}
		}
		switch {
		case cf.Upstream >= 0 && out.Service != nil && cf.Upstream < len(out.Service.Upstreams):
			u := &out.Service.Upstreams[cf.Upstream]
			t := *u.TLS
			t.CA = b
			u.TLS = &t
		case cf.Listener >= 0 && out.Gateway != nil && cf.Listener < len(out.Gateway.Listeners):
			l := &out.Gateway.Listeners[cf.Listener]
			c := *l.ClientCertificate
			c.CA = b
			l.ClientCertificate = &c
		}
	}
	return &out, nil
}
