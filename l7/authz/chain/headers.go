package chain

import (
	"sort"
	"strings"
)

// framingHeaders belong to the connection or the message framing, which
// Envoy manages itself; an interceptor never sets them on the upstream
// request (Envoy would refuse, or the request would change shape).
var framingHeaders = map[string]bool{
	"host": true, "connection": true, "keep-alive": true, "proxy-connection": true,
	"transfer-encoding": true, "te": true, "trailer": true, "upgrade": true,
	"content-length": true, "expect": true,
}

// clientHeaders are sent by clients for their own purposes, or by Envoy
// for the upstream's, and must reach the upstream as they are: an
// identity header is removed from every client request of its listener
// (see IdentityHeaders), which would take them from every route.
var clientHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "cookie": true,
	"content-type": true, "content-encoding": true, "accept": true, "user-agent": true,
	"origin": true, "referer": true, "forwarded": true, "via": true,
	"x-forwarded-for": true, "x-forwarded-proto": true, "x-forwarded-host": true,
	"x-forwarded-port": true, "x-request-id": true, "traceparent": true, "tracestate": true,
}

// UpstreamHeaderProblem says why an interceptor may not set the request
// header name (lower case) on its way upstream, "" when it may.
func UpstreamHeaderProblem(name string) string {
	switch {
	case strings.HasPrefix(name, ":"):
		return "is a pseudo-header"
	case framingHeaders[name]:
		return "belongs to the connection or the message framing, which Envoy manages"
	case strings.HasPrefix(name, "x-envoy-"):
		return "is Envoy's own (x-envoy-*)"
	}
	return ""
}

// IdentityHeaderProblem says why name (lower case) cannot carry an
// identity the gateway sets (a session field, a JWT claim), "" when it
// can. Such a header is removed from every client request of the
// listener, so it must be one no client needs to send.
func IdentityHeaderProblem(name string) string {
	if why := UpstreamHeaderProblem(name); why != "" {
		return why
	}
	if clientHeaders[name] {
		return "is a header clients send for their own purposes; identity headers are removed from every request of the listener"
	}
	return ""
}

// DefaultSessionHeaders are sessionInterceptor's headers when a route
// names none: session field -> request header.
func DefaultSessionHeaders() map[string]string {
	return map[string]string{"user": "x-user-id", "roles": "x-user-roles"}
}

// IdentityHeaders returns, sorted, the request headers the chain's
// interceptors set from an identity they verified (sessionInterceptor's
// headers). A client must never send them itself, on any route of the
// listener (the translator removes them from every request).
func IdentityHeaders(c Chain) []string {
	set := map[string]bool{}
	for _, in := range c {
		if in.Type != TypeSession {
			continue
		}
		hs := in.Headers
		if len(hs) == 0 {
			hs = DefaultSessionHeaders()
		}
		for _, h := range hs {
			set[strings.ToLower(h)] = true
		}
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}
