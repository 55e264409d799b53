package kubeauth

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// apiServer stands in for the API server's reviews: tokens it knows, for
// which audiences, and who may get which path.
type apiServer struct {
	tokens  map[string][]string // token -> audiences
	allowed map[string]string   // user -> path
	reviews int
	down    bool
}

func (a *apiServer) client() *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("create", "tokenreviews", func(act k8stesting.Action) (bool, runtime.Object, error) {
		a.reviews++
		if a.down {
			return true, nil, errors.New("connection refused")
		}
		tr := act.(k8stesting.CreateAction).GetObject().(*authnv1.TokenReview)
		if auds, ok := a.tokens[tr.Spec.Token]; ok {
			for _, want := range tr.Spec.Audiences {
				for _, have := range auds {
					if have == want {
						tr.Status = authnv1.TokenReviewStatus{Authenticated: true, Audiences: []string{want},
							User: authnv1.UserInfo{Username: "system:serviceaccount:tlb-system:" + tr.Spec.Token}}
					}
				}
			}
		}
		return true, tr, nil
	})
	c.PrependReactor("create", "subjectaccessreviews", func(act k8stesting.Action) (bool, runtime.Object, error) {
		sar := act.(k8stesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview)
		na := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = na != nil && na.Verb == "get" && a.allowed[sar.Spec.User] == na.Path
		return true, sar, nil
	})
	return c
}

// TestGuard: only a token the API server authenticates for the guard's
// audience, of a user RBAC lets get the path, reaches the handler; answers
// are reused for a while; an API server that cannot answer refuses.
func TestGuard(t *testing.T) {
	const path = "/tlb.io/l7/routes"
	api := &apiServer{
		tokens:  map[string][]string{"console": {"tlb-l7"}, "tenant": {"tlb-l7"}, "apiserver-token": {"https://kubernetes.default.svc"}},
		allowed: map[string]string{"system:serviceaccount:tlb-system:console": path},
	}
	now := time.Unix(1000, 0)
	g := &Guard{Client: api.client(), Audience: "tlb-l7", Path: path, Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)}
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("routes")) }))
	get := func(auth string) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/routes", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK && rec.Body.String() != "routes" {
			t.Fatalf("body %q", rec.Body.String())
		}
		return rec.Code
	}
	for name, tc := range map[string]struct {
		auth string
		want int
	}{
		"no token":                            {"", http.StatusUnauthorized},
		"another scheme":                      {"Basic Y29uc29sZTo=", http.StatusUnauthorized},
		"an unknown token":                    {"Bearer forged", http.StatusUnauthorized},
		"a token for the API server":          {"Bearer apiserver-token", http.StatusUnauthorized},
		"a tenant's token for the audience":   {"Bearer tenant", http.StatusForbidden},
		"the console's token":                 {"Bearer console", http.StatusOK},
		"the console's token, scheme in caps": {"BEARER console", http.StatusOK},
	} {
		if got := get(tc.auth); got != tc.want {
			t.Errorf("%s: %d, want %d", name, got, tc.want)
		}
	}
	before := api.reviews
	for range 10 {
		get("Bearer console")
		get("Bearer tenant")
	}
	if api.reviews != before {
		t.Errorf("answers not reused: %d more reviews", api.reviews-before)
	}
	api.down = true
	now = now.Add(11 * time.Second) // the tenant's refusal expired, the console's answer not
	if got := get("Bearer tenant"); got != http.StatusServiceUnavailable {
		t.Errorf("API server down: %d, want 503", got)
	}
	if got := get("Bearer console"); got != http.StatusOK {
		t.Errorf("cached answer: %d, want 200", got)
	}
	now = now.Add(time.Minute)
	if got := get("Bearer console"); got != http.StatusServiceUnavailable {
		t.Errorf("expired answer with the API server down: %d, want 503", got)
	}
}
