package gatewayapi

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// defaultSessionCookie names the cookie of a rule's session persistence
// without a sessionName (the spec leaves the name to the
// implementation).
const defaultSessionCookie = "tlb-session"

// sessionPersistence maps a rule's sessionPersistence (at field f) to
// the route's cookie stickiness: Envoy hashes the cookie onto the
// rule's endpoints (ring hash) and sets it when the request has none.
// A Session lifetime (the default) is a browser-session cookie; a
// Permanent one lives absoluteTimeout. What the cookie hash cannot keep
// is refused by field: Header persistence, and an absoluteTimeout on a
// Session cookie (nothing would end the session when it elapses).
//
// The field is in the experimental channel of v1.6: standard-channel
// CRDs drop it before it reaches the controller.
func sessionPersistence(f string, sp *gatewayv1.SessionPersistence, rb *routeBuild) *model.CookieSticky {
	if sp == nil {
		return nil
	}
	f += ".sessionPersistence"
	if sp.Type != nil && *sp.Type != gatewayv1.CookieBasedSessionPersistence {
		rb.unsupportedf("%s.type: %q is not supported; use Cookie", f, *sp.Type)
		return nil
	}
	s := &model.CookieSticky{Cookie: defaultSessionCookie, Path: "/"}
	if sp.SessionName != nil && *sp.SessionName != "" {
		s.Cookie = *sp.SessionName
	}
	permanent := sp.CookieConfig != nil && sp.CookieConfig.LifetimeType != nil && *sp.CookieConfig.LifetimeType == gatewayv1.PermanentCookieLifetimeType
	ttl := duration(f+".absoluteTimeout", sp.AbsoluteTimeout, rb)
	switch {
	case permanent && ttl <= 0:
		rb.unsupportedf("%s.absoluteTimeout: a Permanent cookie needs a positive lifetime", f)
		return nil
	case !permanent && sp.AbsoluteTimeout != nil:
		rb.unsupportedf("%s.absoluteTimeout: only a Permanent cookie (cookieConfig.lifetimeType) can expire", f)
		return nil
	}
	if permanent {
		s.TTL = ttl
	}
	return s
}
