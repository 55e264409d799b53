package policy

import (
	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// JWT converts what every front end's jwt block shares. hmacKey is the
// front end's field that holds an HMAC secret ("hmacSecretFile",
// "hmacSecretRef") when it is set, else "": an algorithm needs one. The
// key itself is the front end's to fill in (a file, a Secret).
func JWT(in *api.JWT, hmacKey string, hmacSet bool) (*model.JWT, error) {
	if in == nil {
		return nil, nil
	}
	var es Errors
	m := &model.JWT{Issuer: in.Issuer, Audiences: in.Audiences, Cookie: in.Cookie,
		ClaimHeaders: in.ClaimMappings, StripAuthorization: in.StripAuthorization, Required: true}
	if in.Required != nil {
		m.Required = *in.Required
	}
	switch {
	case hmacSet:
		m.HMACAlg = in.Algorithm
		if m.HMACAlg == "" {
			m.HMACAlg = "HS256"
		}
	case in.Algorithm != "":
		es.add("algorithm", "only with %s (a public key's type says its algorithm)", hmacKey)
	}
	return m, es.err()
}

// RouteAuth converts a route's auth block; nil stays nil.
func RouteAuth(in *api.RouteAuth) *model.RouteAuth {
	if in == nil {
		return nil
	}
	return &model.RouteAuth{Required: in.Required, Roles: in.Roles, RolesAll: in.RolesAll}
}
