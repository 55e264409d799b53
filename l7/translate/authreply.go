package translate

import (
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// jwtAudienceRefused is jwt_authn's own refusal of a token for another
// audience: Envoy answers it 403 ("Audiences in Jwt are not allowed",
// with a Bearer challenge saying invalid_token), every other bad or
// missing token 401.
const jwtAudienceRefused = "response.code == 403 && response.code_details.startsWith('jwt_authn_access_denied')"

// authLocalReply is the local reply mapping of a listener with JWT
// services: a token refused by jwt_authn is always 401 (RFC 6750 3.1:
// invalid_token, which a token for another audience is; Envoy says 403),
// keeping jwt_authn's challenge; with roles, an RBAC refusal for a
// missing or malformed roles claim is 401 too (rolesMapper). 403 is left
// for a valid token without the roles a route wants.
func authLocalReply(roles bool) *hcm.LocalReplyConfig {
	c := &hcm.LocalReplyConfig{Mappers: []*hcm.ResponseMapper{{Filter: celFilter(jwtAudienceRefused), StatusCode: u32(401)}}}
	if roles {
		c.Mappers = append(c.Mappers, rolesMapper())
	}
	return c
}
