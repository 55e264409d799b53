package model

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/jwks"
)

// JWT is how a service's routes authenticate JSON Web Tokens (Envoy's
// jwt_authn), from exactly one key source: an HMAC secret, a local JWKS
// (a PEM public key is converted to one when it is read), or a remote
// JWKS fetched through one of the service's upstreams.
type JWT struct {
	Issuer    string
	Audiences []string
	// HMAC is the shared secret of HS256/384/512 tokens, with HMACAlg.
	HMAC    PrivateKey
	HMACAlg string
	// JWKS is a local JSON Web Key Set (public keys).
	JWKS string
	// Remote fetches the JWKS over HTTP.
	Remote *RemoteJWKS
	// Cookie is read for the token when Authorization carries none.
	Cookie string
	// ClaimHeaders maps a claim to the request header the upstream gets
	// it in; the client's own values of those headers are removed.
	ClaimHeaders map[string]string
	// StripAuthorization removes the token from the request upstream.
	StripAuthorization bool
	// Required is the default of the routes: a valid token is required.
	// Otherwise a route lets requests without a valid token through,
	// anonymous.
	Required bool
}

// RemoteJWKS is a JWKS fetched from URL through a service's upstream and
// cached for CacheDuration.
type RemoteJWKS struct {
	URL           string
	Upstream      string
	CacheDuration time.Duration
}

// RouteAuth is a route's JWT requirement and roles, over the service's JWT.
type RouteAuth struct {
	// Required overrides the service's JWT.Required when set.
	Required *bool
	// Roles: the token's roles claim must hold at least one of them.
	Roles []string
	// RolesAll: the token's roles claim must hold all of them.
	RolesAll []string
}

// NeedsRoles reports whether the route checks roles.
func (a *RouteAuth) NeedsRoles() bool { return a != nil && len(a.Roles)+len(a.RolesAll) > 0 }

// JWTRequired reports whether a route of s requires a valid token.
func JWTRequired(s Service, r Route) bool {
	if r.Auth != nil && r.Auth.Required != nil {
		return *r.Auth.Required
	}
	return s.JWT != nil && s.JWT.Required
}

// checkJWT adds the field errors of a service's JWT settings and of its
// routes' auth.
func checkJWT(s Service, bad func(field, format string, a ...any)) {
	if j := s.JWT; j != nil {
		checkJWTKeySource(j, s.Upstreams, bad)
		checkJWTClaims(j, bad)
	}
	for i, r := range s.Routes {
		if r.Auth == nil {
			continue
		}
		f := fmt.Sprintf("routes[%d].auth", i)
		if s.JWT == nil {
			bad(f, "needs the service's jwt settings")
		}
		for j, role := range append(append([]string(nil), r.Auth.Roles...), r.Auth.RolesAll...) {
			if role == "" {
				bad(f, "role %d is empty", j)
			}
		}
	}
}

// checkJWTKeySource adds the field errors of where a service's JWT keys
// come from: exactly one of an HMAC secret, a JWKS and a remote JWKS
// fetched through one of ups, each valid.
func checkJWTKeySource(j *JWT, ups []Upstream, bad func(field, format string, a ...any)) {
	sources := 0
	if !j.HMAC.Empty() {
		sources++
		if err := jwks.CheckHMAC(j.HMAC.Reveal(), j.HMACAlg); err != nil {
			bad("jwt.hmacSecretFile", "%v", err)
		}
	}
	if j.JWKS != "" {
		sources++
		if err := jwks.Check([]byte(j.JWKS)); err != nil {
			bad("jwt.jwks", "%v", err)
		}
	}
	if j.Remote != nil {
		sources++
		checkRemoteJWKS(j.Remote, ups, bad)
	}
	if sources != 1 {
		bad("jwt", "set exactly one of hmacSecretFile, publicKeyFile, jwksFile and remoteJwks")
	}
}

// checkRemoteJWKS adds the field errors of a remote JWKS: an http(s) URL,
// fetched through one of ups, cached for a duration that is not negative.
func checkRemoteJWKS(r *RemoteJWKS, ups []Upstream, bad func(field, format string, a ...any)) {
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("jwt.remoteJwks.url", "%q is not an http(s) URL", r.URL)
	}
	found := false
	for _, up := range ups {
		found = found || up.Name == r.Upstream
	}
	if !found {
		bad("jwt.remoteJwks.upstream", "no upstream %q in this service", r.Upstream)
	}
	if r.CacheDuration < 0 {
		bad("jwt.remoteJwks.cacheDuration", "must not be negative")
	}
}

// checkJWTClaims adds the field errors of what a service reads from a
// token: the cookie it may come in, the claims copied to headers, and
// the audiences.
func checkJWTClaims(j *JWT, bad func(field, format string, a ...any)) {
	if j.Cookie != "" && checkHeaderName(j.Cookie) != nil {
		bad("jwt.cookie", "%q is not a cookie name", j.Cookie)
	}
	for claim, h := range j.ClaimHeaders {
		if claim == "" {
			bad("jwt.claimMappings", "empty claim name")
		}
		if err := checkHeaderName(h); err != nil || h[0] == ':' {
			bad("jwt.claimMappings."+claim, "%q is not a header name the gateway may set", h)
		} else if why := chain.IdentityHeaderProblem(strings.ToLower(h)); why != "" {
			bad("jwt.claimMappings."+claim, "%q %s", h, why)
		}
	}
	for i, a := range j.Audiences {
		if a == "" {
			bad(fmt.Sprintf("jwt.audiences[%d]", i), "empty audience")
		}
	}
}
