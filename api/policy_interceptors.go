package api

import (
	"encoding/json"
	"fmt"
	"time"
)

// The interceptor types a chain may list.
const (
	InterceptorSession  = "sessionInterceptor"
	InterceptorCSRF     = "csrfInterceptor"
	InterceptorCSP      = "cspInterceptor"
	InterceptorExternal = "external"
	// InterceptorBasicAuth checks HTTP Basic credentials against bcrypt
	// hashes.
	InterceptorBasicAuth = "basicAuth"
)

// InterceptorChain is the ordered list of interceptors of one route (DSL
// routes[].interceptors, tlb.io/l7-interceptors, TrafficPolicy
// spec.interceptors), and the value the authorization service reads.
// l7/authz/chain decodes it strictly and checks it.
type InterceptorChain []Interceptor

// Interceptor is one entry of a route's chain. Type says which fields
// apply; the others must stay empty.
type Interceptor struct {
	// Type is one of the Interceptor* types.
	Type string `json:"type"`
	// Timeout bounds this interceptor (default 200ms).
	Timeout Duration `json:"timeout,omitempty"`
	// FailOpen lets the request go on when the interceptor fails or times
	// out; by default such a failure answers 503.
	FailOpen bool `json:"failOpen,omitempty"`

	// Cookie is the session cookie's name (sessionInterceptor; default
	// "session").
	Cookie string `json:"cookie,omitempty"`
	// Headers maps a session field to the request header the upstream
	// receives it in (sessionInterceptor; default user -> x-user-id,
	// roles -> x-user-roles).
	Headers map[string]string `json:"headers,omitempty"`
	// OnMissing is "401" (default) or "redirect"
	// (sessionInterceptor).
	OnMissing string `json:"onMissing,omitempty"`
	// RedirectURL is the Location of the redirect (sessionInterceptor, with
	// "redirect").
	RedirectURL string `json:"redirectURL,omitempty"`

	// TokenHeader carries the double-submit token (csrfInterceptor;
	// default "x-csrf-token").
	TokenHeader string `json:"tokenHeader,omitempty"`
	// TokenCookie carries the same token as a cookie (csrfInterceptor;
	// default "csrf_token").
	TokenCookie string `json:"tokenCookie,omitempty"`
	// SessionField is the field of the session (loaded by a
	// sessionInterceptor earlier in the chain) that holds the session's
	// CSRF token (csrfInterceptor; default "csrf"): the token a request
	// sends must be that session's.
	SessionField string `json:"sessionField,omitempty"`
	// AllowedOrigins are the origins (scheme://host[:port]) trusted besides
	// the request's own (csrfInterceptor).
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`

	// Policy is the Content-Security-Policy value (cspInterceptor).
	Policy string `json:"policy,omitempty"`
	// ReportOnly sends Content-Security-Policy-Report-Only instead
	// (cspInterceptor).
	ReportOnly bool `json:"reportOnly,omitempty"`

	// UsersFile is the absolute path, on the l7 side, of an htpasswd file
	// of bcrypt hashes (basicAuth), e.g. a mounted Secret's key. Only the
	// operator writes it: in the DSL, or in a declaration that Users names.
	UsersFile string `json:"usersFile,omitempty"`
	// Users names an htpasswd file the operator declared (basicAuth; a
	// DSL gateway/interceptors/v1 file): the only way a Kubernetes object
	// names one. l7 replaces it with the declared UsersFile before
	// serving.
	Users string `json:"users,omitempty"`
	// Realm is the realm of the Basic challenge (basicAuth; default
	// "restricted").
	Realm string `json:"realm,omitempty"`

	// ID names the service's interceptor (external).
	ID string `json:"id,omitempty"`
	// Transport is "grpc" or "rest" (external).
	Transport string `json:"transport,omitempty"`
	// Address is host:port of the gRPC interceptor (external, grpc).
	Address string `json:"address,omitempty"`
	// URL receives the REST interceptor's POST (external, rest).
	URL string `json:"url,omitempty"`
	// PathPattern is an RE2 pattern of the request path whose named groups
	// are sent as path parameters (external, optional).
	PathPattern string `json:"pathPattern,omitempty"`
	// Parameters are sent to the interceptor as configured (external).
	Parameters map[string]string `json:"parameters,omitempty"`
	// Endpoint names an interceptor endpoint the operator declared
	// (external; a DSL gateway/interceptors/v1 file), instead of
	// Transport with Address or URL: the only way a Kubernetes object
	// names one. l7 replaces it with the declared endpoint before serving.
	Endpoint string `json:"endpoint,omitempty"`
}

// Name is the interceptor's name in metrics and logs: its type, or
// "external:<id>". It comes from configuration only, never from a request,
// so it stays a bounded label.
func (in Interceptor) Name() string {
	if in.Type == InterceptorExternal {
		return InterceptorExternal + ":" + in.ID
	}
	return in.Type
}

// Duration is a time.Duration written in JSON as a Go duration string
// ("150ms").
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string like \"150ms\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q", s)
	}
	*d = Duration(v)
	return nil
}
