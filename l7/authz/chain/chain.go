package chain

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/tlbproject/tlb/api"
)

// Key is the context extension key whose value is the route's chain.
const Key = "tlb.interceptors"

// The interceptor types a route may list.
const (
	TypeSession  = api.InterceptorSession
	TypeCSRF     = api.InterceptorCSRF
	TypeCSP      = api.InterceptorCSP
	TypeExternal = api.InterceptorExternal
	// TypeBasicAuth checks HTTP Basic credentials against bcrypt hashes.
	TypeBasicAuth = api.InterceptorBasicAuth
)

// The transports of an external interceptor.
const (
	TransportGRPC = "grpc"
	TransportREST = "rest"
)

// The answers of sessionInterceptor when the request has no valid session.
const (
	OnMissingUnauthorized = "401"
	OnMissingRedirect     = "redirect"
)

// DefaultCSRFSessionField is the session field holding the session's CSRF
// token when a csrfInterceptor names none.
const DefaultCSRFSessionField = "csrf"

// DefaultTimeout bounds one interceptor when the route sets no timeout.
const DefaultTimeout = 200 * time.Millisecond

// Chain is the ordered list of interceptors of one route; its schema is
// api.InterceptorChain, which a TrafficPolicy embeds.
type Chain = api.InterceptorChain

// Interceptor is one entry of a route's chain (api.Interceptor).
type Interceptor = api.Interceptor

// Encode returns the context extension value of a route's chain. It
// decodes what it wrote before returning it, so a value Encode returns
// always decodes, and its errors are Decode's (naming the field).
func Encode(c Chain) (string, error) {
	if c == nil {
		c = Chain{}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encoding interceptors: %w", err)
	}
	if _, err := Decode(string(b)); err != nil {
		return "", err
	}
	return string(b), nil
}

// Duration is a time.Duration written in JSON as a Go duration string
// ("150ms") (api.Duration).
type Duration = api.Duration
