package kube

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
)

// TestSecretCertificateRefusals: a TLS Secret whose key is not the
// certificate's, or whose certificate is expired or not yet valid, is a
// problem naming the Secret, and no certificate is built from it.
func TestSecretCertificateRefusals(t *testing.T) {
	_, otherKey := newTestPair(testNow.Add(-time.Hour), testNow.Add(time.Hour))
	expired, expiredKey := newTestPair(testNow.Add(-48*time.Hour), testNow.Add(-time.Hour))
	early, earlyKey := newTestPair(testNow.Add(time.Hour), testNow.Add(48*time.Hour))
	for name, tc := range map[string]struct {
		chain, key string
		want       string
	}{
		"key of another certificate": {testChain, otherKey, "does not match"},
		"expired":                    {expired, expiredKey, "expired at"},
		"not yet valid":              {early, earlyKey, "not valid before"},
	} {
		t.Run(name, func(t *testing.T) {
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "t"}, Type: corev1.SecretTypeTLS,
				Data: map[string][]byte{corev1.TLSCertKey: []byte(tc.chain), corev1.TLSPrivateKeyKey: []byte(tc.key)}}
			svc := service("web", "shop", map[string]string{api.AnnotationL7: "true", api.AnnotationL7Hosts: "a.example.com", api.AnnotationL7TLSSecret: "t"}, "203.0.113.10", port("https", 443))
			b, _, ps := BuildService(svc, nil, map[string]*corev1.Secret{"web/t": sec}, testNow)
			if b.Certificate != nil {
				t.Fatal("a certificate was built from a bad Secret")
			}
			if len(ps) != 1 || !strings.Contains(ps[0].Error(), "web/t") || !strings.Contains(ps[0].Error(), tc.want) {
				t.Fatalf("problems %v; want one naming Secret web/t and saying %q", ps, tc.want)
			}
			if strings.Contains(ps[0].Error(), strings.Split(tc.key, "\n")[1]) {
				t.Fatalf("problem carries key material: %v", ps[0])
			}
		})
	}
}
