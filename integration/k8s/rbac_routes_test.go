//go:build k8s

package k8s

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/integration/tlstest"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/internal/kubeauth"
	l7kube "github.com/tlbproject/tlb/l7/kube"
	l7model "github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// tokenFor asks the API server (TokenRequest) for a token of ServiceAccount
// ns/sa with the given audiences (none: the API server's own).
func tokenFor(t *testing.T, kc kubernetes.Interface, ns, sa string, audiences ...string) string {
	t.Helper()
	tr, err := kc.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: audiences}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of %s/%s: %v", ns, sa, err)
	}
	return tr.Status.Token
}

// TestRBACRoutes (issue 22): l7's /routes, guarded as l7 serve guards it
// (internal/kubeauth with the tlb-l7 ServiceAccount's RBAC from
// deploy/envoy/rbac.yaml), answers the console's token of audience tlb-l7
// (deploy/console/rbac.yaml grants get on /tlb.io/l7/routes), and refuses
// the console's token for the API server (401: wrong audience), a
// tenant's token of the right audience and the rate limit service's l7
// (403: RBAC) and a forged one (401), against the real API server's
// TokenReview and SubjectAccessReview. On main /routes answered anyone.
func TestRBACRoutes(t *testing.T) {
	installRBAC(t, "deploy/envoy/rbac.yaml")
	installRBAC(t, "deploy/console/rbac.yaml")
	kc, _ := clients(t)
	ns := "rbac-routes"
	ensureNamespace(t, kc, ns)
	if _, err := kc.CoreV1().ServiceAccounts(ns).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	l7 := serviceAccountClients(t, "tlb-l7")
	guard := &kubeauth.Guard{Client: l7.Kube, Audience: "tlb-l7", Path: "/tlb.io/l7/routes", Now: time.Now, Log: rbacLog()}
	hs := httptest.NewServer(guard.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"routes":[]}`)) })))
	t.Cleanup(hs.Close)
	get := func(token string) int {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/routes", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for name, tc := range map[string]struct {
		token string
		want  int
	}{
		"the console's token of audience tlb-l7":     {tokenFor(t, kc, "tlb-system", "tlb-console", "tlb-l7"), http.StatusOK},
		"the console's token for the API server":     {tokenFor(t, kc, "tlb-system", "tlb-console"), http.StatusUnauthorized},
		"a tenant's token of audience tlb-l7":        {tokenFor(t, kc, ns, "tenant", "tlb-l7"), http.StatusForbidden},
		"the rate limit l7's token, audience tlb-l7": {tokenFor(t, kc, "tlb-system", "tlb-ratelimit", "tlb-l7"), http.StatusForbidden},
		"a forged token": {"eyJhbGciOiJub25lIn0.e30.", http.StatusUnauthorized},
		"no token":       {"", http.StatusUnauthorized},
	} {
		if got := get(tc.token); got != tc.want {
			t.Errorf("%s: %d, want %d", name, got, tc.want)
		}
	}
}

// TestRBACRateLimitL7 (issue 22): the rate limit service's l7
// (deploy/envoy/ratelimit.yaml: ServiceAccount tlb-ratelimit, l7 serve
// --keyless) builds the model of an HTTPS Service from the real API server
// with a stand-in certificate, as tlb-ratelimit, which may read no Secret
// anywhere (on main that pod ran as tlb-l7 with the TLS Secret mounted).
func TestRBACRateLimitL7(t *testing.T) {
	installRBAC(t, "deploy/envoy/rbac.yaml")
	ctx := context.Background()
	kc, _ := clients(t)
	ns := "tlb-system" // where tlb-l7 may read Secrets: tlb-ratelimit must not
	deleteServicesAtCleanup(t, kc, ns)
	chain, key := tlstest.SelfSigned(t, "rl.example.com")
	if _, err := kc.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rl-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: chain, corev1.TLSPrivateKeyKey: key}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kc.CoreV1().Secrets(ns).Delete(context.Background(), "rl-tls", metav1.DeleteOptions{}) })
	svc := lbService(ns, "rl-web", map[string]string{api.AnnotationL7: "true", api.AnnotationL7Group: "edge",
		api.AnnotationL7Hosts: "rl.example.com", api.AnnotationL7TLSSecret: "rl-tls"})
	svc.Spec.Ports[0].Port = 443
	out, err := kc.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.211"}}
	if _, err := kc.CoreV1().Services(ns).UpdateStatus(ctx, out, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	standIn, err := tlscert.NewStandIn(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := serviceAccountClients(t, "tlb-ratelimit")
	src, err := l7kube.NewSource(c.Kube, rbacLog(), l7kube.Options{Group: "edge", Namespaces: []string{ns}, Now: time.Now, StandIn: &standIn})
	if err != nil {
		t.Fatal(err)
	}
	rec := &latest[l7model.Config]{}
	runUntilCleanup(t, "keyless L7 source", func(ctx context.Context) error {
		return src.Run(ctx, func(_ context.Context, cfg l7model.Config) []l7model.Problem { rec.set(cfg); return nil })
	})
	eventually(t, 30*time.Second, "the keyless model has the HTTPS Service with a stand-in certificate", func() (bool, string) {
		cfg, n := rec.get()
		if n == 0 {
			return false, "nothing published"
		}
		for _, cert := range cfg.Certificates {
			if cert.Key.Equal(l7model.NewPrivateKey(key)) {
				return false, "the real key is in the model"
			}
		}
		names := []string{}
		for _, g := range cfg.Gateways {
			names = append(names, g.Name)
		}
		ok := len(cfg.Certificates) == 1 && string(cfg.Certificates[0].Chain) == string(standIn.Chain)
		return ok, fmt.Sprintf("gateways %s, certificates %d", strings.Join(names, ","), len(cfg.Certificates))
	})
	assertForbidden(t, "tlb-ratelimit", c, []forbidden{
		{"list Secrets where the gateways' l7 may", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"create a TokenReview", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.AuthenticationV1().TokenReviews().Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: "x"}}, metav1.CreateOptions{})
			return err
		}},
	})
}
