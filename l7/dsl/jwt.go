package dsl

import (
	"fmt"
	"strings"

	"github.com/tlbproject/tlb/l7/jwks"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/policy"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// JWTFiles names the key files of a service's jwt settings (at most one
// is set), read by Dir on every load like certificates.
type JWTFiles struct {
	HMACSecretFile string
	PublicKeyFile  string
	JWKSFile       string
}

// stand-ins let Parse, which reads no files, check a service whose key is
// still a file name; Dir fills in the real key and checks again.
var (
	standInHMAC = model.NewPrivateKey([]byte(strings.Repeat("s", 64)))
	standInJWKS = `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}]}` // a key jwks.Check accepts
)

// jwtModel converts the jwt block; the key files are returned for Dir.
func (d *serviceDoc) jwtModel(file string, errs *[]error) (*model.JWT, JWTFiles) {
	j := d.JWT
	if j == nil {
		return nil, JWTFiles{}
	}
	m, err := policy.JWT(&j.JWT, "hmacSecretFile", j.HMACSecretFile != "")
	policyErrs(file, "jwt", err, errs)
	files := JWTFiles{HMACSecretFile: j.HMACSecretFile, PublicKeyFile: j.PublicKeyFile, JWKSFile: j.JWKSFile}
	if r := j.RemoteJWKS; r != nil {
		m.Remote = &model.RemoteJWKS{URL: r.URL, Upstream: r.Upstream,
			CacheDuration: parseDuration(r.CacheDuration, "jwt.remoteJwks.cacheDuration", errs, file)}
		if m.Remote.CacheDuration < 0 {
			*errs = append(*errs, &FieldError{File: file, Field: "jwt.remoteJwks.cacheDuration", Msg: "cannot be off"})
		}
	}
	return m, files
}

// withStandIns returns a copy of s whose file-named key is a stand-in.
func withStandIns(s model.Service, f JWTFiles) model.Service {
	if s.JWT == nil {
		return s
	}
	j := *s.JWT
	if f.HMACSecretFile != "" {
		j.HMAC = standInHMAC
	}
	if f.PublicKeyFile != "" || f.JWKSFile != "" {
		j.JWKS = standInJWKS
		if f.PublicKeyFile != "" && f.JWKSFile != "" {
			j.JWKS += " " // two sources: let the check count both
			j.HMAC = standInHMAC
		}
	}
	s.JWT = &j
	return s
}

// loadJWTKeys reads the key files of a service's jwt block into a copy of
// it. The secret is never part of an error.
func (d *Dir) loadJWTKeys(file string, s model.Service, f JWTFiles) (model.Service, error) {
	if s.JWT == nil {
		return s, nil
	}
	j := *s.JWT
	read := func(field, path string) ([]byte, error) {
		b, err := tlscert.ReadFile(d.abs(path), d.certDirs)
		if err != nil {
			return nil, &FieldError{File: file, Field: field, Msg: err.Error()}
		}
		return b, nil
	}
	switch {
	case f.HMACSecretFile != "":
		b, err := read("jwt.hmacSecretFile", f.HMACSecretFile)
		if err != nil {
			return s, err
		}
		j.HMAC = model.NewPrivateKey([]byte(strings.TrimRight(string(b), "\r\n")))
		clear(b)
	case f.PublicKeyFile != "":
		b, err := read("jwt.publicKeyFile", f.PublicKeyFile)
		if err != nil {
			return s, err
		}
		if j.JWKS, err = jwks.FromPEM(b); err != nil {
			return s, &FieldError{File: file, Field: "jwt.publicKeyFile", Msg: fmt.Sprintf("%s: %v", f.PublicKeyFile, err)}
		}
	case f.JWKSFile != "":
		b, err := read("jwt.jwksFile", f.JWKSFile)
		if err != nil {
			return s, err
		}
		j.JWKS = string(b)
	}
	s.JWT = &j
	if err := model.CheckService(s); err != nil {
		return s, err
	}
	return s, nil
}
