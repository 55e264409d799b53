package intercept

import (
	"context"
	"strings"
)

// Interceptor decides about one request. An error means the interceptor
// could not decide (its store or service failed or timed out); the caller
// applies the route's fail-closed or fail-open policy. A refusal is not an
// error: it is a Verdict with Deny set.
type Interceptor interface {
	Intercept(ctx context.Context, r *Request) (Verdict, error)
}

// FailOpener is implemented by an interceptor that must still change the
// request when it failed and the route lets the request go on without it:
// sessionInterceptor removes the identity headers, so a client's own
// x-user-id never reaches the upstream because Redis was down.
type FailOpener interface {
	FailOpen() Verdict
}

// Request is the HTTP request as an interceptor sees it.
type Request struct {
	// Method is the HTTP method ("POST").
	Method string
	// Path is the path without the query string.
	Path string
	// RawQuery is the query string without "?".
	RawQuery string
	// Host is the :authority.
	Host string
	// Scheme is "http" or "https", as the client used it.
	Scheme string
	// Headers are the request headers with lower-case names, including
	// those set by earlier interceptors of the route.
	Headers map[string]string
	// Session holds the fields of the session a sessionInterceptor earlier
	// in the route's chain loaded; nil when none did.
	Session map[string]string
}

// Cookie returns the value of the named cookie of the Cookie header.
func (r *Request) Cookie(name string) (string, bool) {
	h := r.Headers["cookie"]
	for h != "" {
		var part string
		part, h, _ = strings.Cut(h, ";")
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && k == name {
			return strings.Trim(v, "\""), true
		}
	}
	return "", false
}

// Header is one header name (lower case) and value.
type Header struct {
	Name  string
	Value string
}

// Response is a complete answer to the client, sent instead of the
// upstream's.
type Response struct {
	Status  int
	Headers []Header
	Body    string
}

// Verdict is an interceptor's decision.
type Verdict struct {
	// Deny, when set, stops the request and answers the client with it;
	// the other fields are then ignored.
	Deny *Response
	// Upstream are headers set (replacing any value) on the request the
	// upstream and the next interceptors receive.
	Upstream []Header
	// Remove are headers removed from that request.
	Remove []string
	// Downstream are headers set on the response to the client.
	Downstream []Header
	// Session, when set, is the session the interceptor verified: the
	// next interceptors of the chain see it as Request.Session.
	Session map[string]string
}

// Allow is the verdict that lets the request go on unchanged.
func Allow() Verdict { return Verdict{} }

// Refuse is the verdict that answers the client with status and a short
// plain-text body.
func Refuse(status int, body string, headers ...Header) Verdict {
	hs := append([]Header{{Name: "content-type", Value: "text/plain; charset=utf-8"}}, headers...)
	return Verdict{Deny: &Response{Status: status, Headers: hs, Body: body}}
}

// ValidHeaderValue reports whether v may be sent as a header value: no
// control character but horizontal tab (RFC 9110 field-value). A CR or LF
// would split the header; Envoy refuses the request (503) rather than
// sending it.
func ValidHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
