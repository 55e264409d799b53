package builtin

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// SessionStore loads a session's fields by session id. found is false for
// an unknown or expired session; err is for a store that cannot answer.
type SessionStore interface {
	Load(ctx context.Context, id string) (fields map[string]string, found bool, err error)
}

// maxFieldValue bounds a session field sent upstream as a header.
const maxFieldValue = 8 << 10

// Session is sessionInterceptor.
type Session struct {
	store       SessionStore
	cookie      string
	fields      []string // session fields, sorted
	headers     map[string]string
	onMissing   string
	redirectURL string
}

// NewSession builds sessionInterceptor from its decoded settings.
func NewSession(cfg chain.Interceptor, store SessionStore) *Session {
	fields := make([]string, 0, len(cfg.Headers))
	for f := range cfg.Headers {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	return &Session{store: store, cookie: cfg.Cookie, fields: fields, headers: cfg.Headers,
		onMissing: cfg.OnMissing, redirectURL: cfg.RedirectURL}
}

// Intercept loads the session named by the cookie and forwards its
// identity, or answers 401 or the redirect.
func (s *Session) Intercept(ctx context.Context, r *intercept.Request) (intercept.Verdict, error) {
	id, ok := r.Cookie(s.cookie)
	if !ok || !sessionID(id) {
		return s.missing(), nil
	}
	fields, found, err := s.store.Load(ctx, id)
	if err != nil {
		return intercept.Verdict{}, fmt.Errorf("loading session: %w", err)
	}
	if !found {
		return s.missing(), nil
	}
	if fields == nil {
		fields = map[string]string{}
	}
	v := intercept.Verdict{Session: fields}
	for _, f := range s.fields {
		h := s.headers[f]
		if val, ok := fields[f]; ok && val != "" {
			if len(val) > maxFieldValue || !intercept.ValidHeaderValue(val) {
				// A line break would split the upstream request's header
				// (Envoy refuses the request); the session is not what the
				// application meant to store: fail, do not guess.
				return intercept.Verdict{}, fmt.Errorf("session field %q: the value has a control character or more than %d bytes; it cannot be sent as header %s", f, maxFieldValue, h)
			}
			v.Upstream = append(v.Upstream, intercept.Header{Name: h, Value: val})
		} else {
			v.Remove = append(v.Remove, h)
		}
	}
	return v, nil
}

// FailOpen removes every configured identity header: a request let through
// without its session must not carry an identity the client made up.
func (s *Session) FailOpen() intercept.Verdict {
	var v intercept.Verdict
	for _, f := range s.fields {
		v.Remove = append(v.Remove, s.headers[f])
	}
	return v
}

func (s *Session) missing() intercept.Verdict {
	if s.onMissing == chain.OnMissingRedirect {
		return intercept.Verdict{Deny: &intercept.Response{
			Status:  http.StatusFound,
			Headers: []intercept.Header{{Name: "location", Value: s.redirectURL}, {Name: "cache-control", Value: "no-store"}},
		}}
	}
	return intercept.Refuse(http.StatusUnauthorized, "unauthorized: no valid session\n")
}

// sessionID reports whether id may name a session: 1 to 128 characters of
// [A-Za-z0-9_-]. Anything else never reaches the store.
func sessionID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}
