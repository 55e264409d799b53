package chain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// allowed are the fields a type accepts: type, timeout and failOpen, and
// its own.
func allowed(typ string) ([]string, bool) {
	common := []string{"type", "timeout", "failOpen"}
	switch typ {
	case TypeSession:
		return append(common, "cookie", "headers", "onMissing", "redirectURL"), true
	case TypeCSRF:
		return append(common, "tokenHeader", "tokenCookie", "sessionField", "allowedOrigins"), true
	case TypeCSP:
		return append(common, "policy", "reportOnly"), true
	case TypeExternal:
		return append(common, "id", "transport", "address", "url", "pathPattern", "parameters", "endpoint"), true
	case TypeBasicAuth:
		return append(common, "usersFile", "users", "realm"), true
	}
	return nil, false
}

// targets points each JSON field name at the struct field it fills.
func targets(in *Interceptor) map[string]any {
	return map[string]any{
		"type": &in.Type, "timeout": &in.Timeout, "failOpen": &in.FailOpen,
		"cookie": &in.Cookie, "headers": &in.Headers, "onMissing": &in.OnMissing,
		"redirectURL": &in.RedirectURL,
		"tokenHeader": &in.TokenHeader, "tokenCookie": &in.TokenCookie, "sessionField": &in.SessionField,
		"allowedOrigins": &in.AllowedOrigins,
		"policy":         &in.Policy, "reportOnly": &in.ReportOnly,
		"usersFile": &in.UsersFile, "users": &in.Users, "realm": &in.Realm,
		"id": &in.ID, "transport": &in.Transport, "address": &in.Address, "url": &in.URL,
		"pathPattern": &in.PathPattern, "parameters": &in.Parameters, "endpoint": &in.Endpoint,
	}
}

// Decode reads a route's chain from its context extension value, checks
// it and fills in the defaults. Errors name the field:
// "interceptors[1].timeout: bad duration \"x\"".
func Decode(value string) (Chain, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(value), &raws); err != nil {
		return nil, fmt.Errorf("interceptors: want a JSON array of interceptor objects: %w", err)
	}
	c := make(Chain, 0, len(raws))
	for i, raw := range raws {
		in, err := decodeOne(raw)
		if err != nil {
			return nil, fmt.Errorf("interceptors[%d].%w", i, err)
		}
		c = append(c, in)
	}
	return c, nil
}

func decodeOne(raw json.RawMessage) (Interceptor, error) {
	var in Interceptor
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return in, errors.New("type: required (got null)")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return in, fmt.Errorf("type: want an object: %w", err)
	}
	t, ok := fields["type"]
	if !ok {
		return in, errors.New("type: required")
	}
	if err := json.Unmarshal(t, &in.Type); err != nil {
		return in, errors.New("type: want a string")
	}
	own, ok := allowed(in.Type)
	if !ok {
		return in, fmt.Errorf("type: unknown interceptor type %q (want %s, %s, %s, %s or %s)",
			in.Type, TypeSession, TypeCSRF, TypeCSP, TypeBasicAuth, TypeExternal)
	}
	ok2 := map[string]bool{}
	for _, f := range own {
		ok2[f] = true
	}
	dst := targets(&in)
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names) // the first error is the same on every run
	for _, name := range names {
		if !ok2[name] {
			if _, known := dst[name]; known {
				return in, fmt.Errorf("%s: not a field of %s", name, in.Type)
			}
			return in, fmt.Errorf("%s: unknown field", name)
		}
		if err := json.Unmarshal(fields[name], dst[name]); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return in, fmt.Errorf("%s: want %s, got %s", name, te.Type, te.Value)
			}
			return in, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := validate(&in); err != nil {
		return in, err
	}
	defaults(&in)
	return in, nil
}

// defaults fills in what a route may leave out.
func defaults(in *Interceptor) {
	if in.Timeout == 0 {
		in.Timeout = Duration(DefaultTimeout)
	}
	switch in.Type {
	case TypeSession:
		if in.Cookie == "" {
			in.Cookie = "session"
		}
		if len(in.Headers) == 0 {
			in.Headers = DefaultSessionHeaders()
		}
		if in.OnMissing == "" {
			in.OnMissing = OnMissingUnauthorized
		}
	case TypeBasicAuth:
		if in.Realm == "" {
			in.Realm = "restricted"
		}
	case TypeCSRF:
		if in.TokenHeader == "" {
			in.TokenHeader = "x-csrf-token"
		}
		if in.TokenCookie == "" {
			in.TokenCookie = "csrf_token"
		}
	}
}
