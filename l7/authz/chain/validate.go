package chain

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// MaxTimeout is the longest timeout an interceptor may have.
const MaxTimeout = 30 * time.Second

// validate checks one interceptor's values. Errors start with the field.
func validate(in *Interceptor) error {
	if _, ok := allowed(in.Type); !ok {
		return fmt.Errorf("type: unknown interceptor type %q", in.Type)
	}
	if d := time.Duration(in.Timeout); d < 0 || d > MaxTimeout {
		return fmt.Errorf("timeout: %s is outside (0, %s]", d, MaxTimeout)
	}
	switch in.Type {
	case TypeSession:
		return validateSession(in)
	case TypeCSRF:
		return validateCSRF(in)
	case TypeCSP:
		if in.Policy == "" {
			return errors.New("policy: required")
		}
		if !printable(in.Policy) {
			return errors.New("policy: control characters are not allowed in a header value")
		}
	case TypeExternal:
		return validateExternal(in)
	case TypeBasicAuth:
		switch {
		case in.Users != "" && in.UsersFile != "":
			return errors.New("users: not with usersFile (name a declared htpasswd file or give its path, not both)")
		case in.Users != "":
			if !IsDeclaredName(in.Users) {
				return fmt.Errorf("users: %q is not the name of a declared htpasswd file (lower-case letters, digits, '-' and '.')", in.Users)
			}
		case !strings.HasPrefix(in.UsersFile, "/") || !printable(in.UsersFile):
			return fmt.Errorf("usersFile: %q is not an absolute path", in.UsersFile)
		}
		if !printable(in.Realm) || strings.ContainsAny(in.Realm, "\"\\") {
			return fmt.Errorf("realm: %q may not hold quotes, backslashes or control characters", in.Realm)
		}
	}
	return nil
}

func validateSession(in *Interceptor) error {
	if in.Cookie != "" && !IsToken(in.Cookie) {
		return fmt.Errorf("cookie: %q is not a cookie name", in.Cookie)
	}
	for field, h := range in.Headers {
		if field == "" {
			return errors.New("headers: empty session field name")
		}
		if !IsToken(h) {
			return fmt.Errorf("headers.%s: %q is not a header name", field, h)
		}
		if h != strings.ToLower(h) {
			return fmt.Errorf("headers.%s: %q must be lower case (Envoy's header names are)", field, h)
		}
		if why := IdentityHeaderProblem(h); why != "" {
			return fmt.Errorf("headers.%s: %q %s", field, h, why)
		}
	}
	switch in.OnMissing {
	case "", OnMissingUnauthorized:
		if in.RedirectURL != "" {
			return fmt.Errorf("redirectURL: only with onMissing %q", OnMissingRedirect)
		}
	case OnMissingRedirect:
		if in.RedirectURL == "" {
			return errors.New("redirectURL: required with onMissing \"redirect\"")
		}
		u, err := url.Parse(in.RedirectURL)
		if err != nil || !printable(in.RedirectURL) || (!u.IsAbs() && !strings.HasPrefix(in.RedirectURL, "/")) {
			return fmt.Errorf("redirectURL: %q is not an absolute URL or path", in.RedirectURL)
		}
	default:
		return fmt.Errorf("onMissing: %q is neither %q nor %q", in.OnMissing, OnMissingUnauthorized, OnMissingRedirect)
	}
	return nil
}

func validateCSRF(in *Interceptor) error {
	if in.TokenHeader != "" && (!IsToken(in.TokenHeader) || in.TokenHeader != strings.ToLower(in.TokenHeader)) {
		return fmt.Errorf("tokenHeader: %q is not a lower-case header name", in.TokenHeader)
	}
	if in.TokenCookie != "" && !IsToken(in.TokenCookie) {
		return fmt.Errorf("tokenCookie: %q is not a cookie name", in.TokenCookie)
	}
	if in.SessionField != "" && !printable(in.SessionField) {
		return fmt.Errorf("sessionField: %q has control characters", in.SessionField)
	}
	for i, o := range in.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return fmt.Errorf("allowedOrigins[%d]: %q is not an origin like https://app.example.com", i, o)
		}
	}
	return nil
}

func validateExternal(in *Interceptor) error {
	if in.ID == "" || !IsToken(in.ID) {
		return fmt.Errorf("id: %q is not an interceptor id", in.ID)
	}
	if in.Endpoint != "" {
		switch {
		case !IsDeclaredName(in.Endpoint):
			return fmt.Errorf("endpoint: %q is not the name of a declared interceptor endpoint (lower-case letters, digits, '-' and '.')", in.Endpoint)
		case in.Transport != "":
			return errors.New("transport: not with endpoint (the declaration says it)")
		case in.Address != "":
			return errors.New("address: not with endpoint (the declaration says it)")
		case in.URL != "":
			return errors.New("url: not with endpoint (the declaration says it)")
		}
		return validateCall(in)
	}
	switch in.Transport {
	case TransportGRPC:
		if in.URL != "" {
			return errors.New("url: only with transport \"rest\"")
		}
		if _, port, err := net.SplitHostPort(in.Address); err != nil || port == "" {
			return fmt.Errorf("address: %q is not host:port", in.Address)
		}
	case TransportREST:
		if in.Address != "" {
			return errors.New("address: only with transport \"grpc\"")
		}
		u, err := url.Parse(in.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url: %q is not an http(s) URL", RedactURL(in.URL))
		}
		if u.User != nil {
			// The chain travels in Envoy's route configuration: credentials
			// there are in every config dump, l7 render and error text.
			return fmt.Errorf("url: %q carries user:password@; credentials do not belong in an interceptor's URL (Envoy's config dump and l7's errors would show them)", RedactURL(in.URL))
		}
	default:
		return fmt.Errorf("transport: %q is neither %q nor %q", in.Transport, TransportGRPC, TransportREST)
	}
	return validateCall(in)
}

// validateCall checks what an external interceptor sends besides where.
func validateCall(in *Interceptor) error {
	if in.PathPattern != "" {
		if _, err := regexp.Compile(in.PathPattern); err != nil {
			return fmt.Errorf("pathPattern: %w", err)
		}
	}
	for k := range in.Parameters {
		if k == "" {
			return errors.New("parameters: empty parameter name")
		}
	}
	return nil
}

// IsDeclaredName reports whether s may name an operator's declaration:
// 1 to 253 lower-case letters, digits, '-' and '.', starting with a
// letter or digit.
func IsDeclaredName(s string) bool {
	if s == "" || len(s) > 253 || s[0] == '-' || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// IsToken reports whether s is an HTTP token (RFC 9110), the syntax of
// header and cookie names.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// printable reports whether s has no control characters.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}
