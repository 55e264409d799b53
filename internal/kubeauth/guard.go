package kubeauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// How long an answer is reused: an allowed caller for a minute, a refused
// one for ten seconds (so a flood of bad tokens costs the API server
// little), at most maxCached tokens.
const (
	allowedFor = time.Minute
	refusedFor = 10 * time.Second
	maxCached  = 1024
	// reviewTimeout bounds the API server's answer.
	reviewTimeout = 5 * time.Second
)

// Guard admits requests whose bearer token the API server authenticates
// for Audience and authorizes to "get" Path.
type Guard struct {
	Client kubernetes.Interface
	// Audience is what the token must be issued for (a projected token's
	// audience), so a token meant for the API server or for another
	// component is refused, and a token for this one is useless elsewhere.
	Audience string
	// Path is the non-resource path RBAC rules name, e.g.
	// "/tlb.io/l7/routes" (nonResourceURLs in a ClusterRole).
	Path string
	Now  func() time.Time
	Log  *slog.Logger

	mu    sync.Mutex
	cache map[[sha256.Size]byte]answer
}

type answer struct {
	status  int // http.StatusOK, StatusUnauthorized or StatusForbidden
	user    string
	expires time.Time
}

// Wrap returns h behind the guard: 401 without an acceptable token, 403
// for a user RBAC does not allow, 503 when the API server cannot answer.
func (g *Guard) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tlb"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		a, err := g.review(r.Context(), token)
		if err != nil {
			g.Log.Warn("could not review a caller's token", "path", r.URL.Path, "err", err)
			http.Error(w, "the API server could not review the token", http.StatusServiceUnavailable)
			return
		}
		switch a.status {
		case http.StatusOK:
			h.ServeHTTP(w, r)
		case http.StatusUnauthorized:
			w.Header().Set("WWW-Authenticate", `Bearer realm="tlb", error="invalid_token"`)
			http.Error(w, "the token is not valid for this audience", http.StatusUnauthorized)
		default:
			http.Error(w, fmt.Sprintf("%s may not get %s", a.user, g.Path), http.StatusForbidden)
		}
	})
}

// bearer returns the request's bearer token.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// review answers for token, from the cache or the API server.
func (g *Guard) review(ctx context.Context, token string) (answer, error) {
	key := sha256.Sum256([]byte(token))
	now := g.Now()
	g.mu.Lock()
	a, ok := g.cache[key]
	g.mu.Unlock()
	if ok && now.Before(a.expires) {
		return a, nil
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	a, err := g.ask(ctx, token)
	if err != nil {
		return answer{}, err
	}
	a.expires = now.Add(refusedFor)
	if a.status == http.StatusOK {
		a.expires = now.Add(allowedFor)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cache == nil || len(g.cache) >= maxCached {
		g.cache = map[[sha256.Size]byte]answer{}
	}
	g.cache[key] = a
	return a, nil
}

// ask sends a TokenReview and, for an authenticated user, a
// SubjectAccessReview.
func (g *Guard) ask(ctx context.Context, token string) (answer, error) {
	if g.Audience == "" || g.Path == "" {
		return answer{}, errors.New("kubeauth: the guard needs an audience and a path")
	}
	tr, err := g.Client.AuthenticationV1().TokenReviews().Create(ctx, &authnv1.TokenReview{
		Spec: authnv1.TokenReviewSpec{Token: token, Audiences: []string{g.Audience}}}, metav1.CreateOptions{})
	if err != nil {
		return answer{}, fmt.Errorf("TokenReview: %w", err)
	}
	st := tr.Status
	if !st.Authenticated || !audienceOK(st.Audiences, g.Audience) {
		return answer{status: http.StatusUnauthorized}, nil
	}
	extra := map[string]authzv1.ExtraValue{}
	for k, v := range st.User.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	sar, err := g.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{
		Spec: authzv1.SubjectAccessReviewSpec{User: st.User.Username, UID: st.User.UID, Groups: st.User.Groups, Extra: extra,
			NonResourceAttributes: &authzv1.NonResourceAttributes{Path: g.Path, Verb: "get"}}}, metav1.CreateOptions{})
	if err != nil {
		return answer{}, fmt.Errorf("SubjectAccessReview: %w", err)
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		return answer{status: http.StatusForbidden, user: st.User.Username}, nil
	}
	return answer{status: http.StatusOK, user: st.User.Username}, nil
}

// audienceOK: the API server echoes the audiences the token is valid for;
// the guard's must be among them.
func audienceOK(got []string, want string) bool {
	for _, a := range got {
		if a == want {
			return true
		}
	}
	return false
}
