package kube

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/bgp"
	"github.com/tlbproject/tlb/internal/kube/kubetest"
)

func passwordSecret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tlb-system", Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func withPassword(p *v1alpha1.BGPPeer, secret string) v1alpha1.BGPPeer {
	p.Spec.PasswordSecretRef = &v1alpha1.BGPPeerSecretRef{Name: secret}
	return *p
}

// TestBuildBGPPasswords: a BGPPeer's passwordSecretRef becomes the peer's
// password (trimmed like a password file); a missing Secret, key, an
// empty or too long password leaves the peer out with an error naming
// the peer, the field and the Secret, and never the password.
func TestBuildBGPPasswords(t *testing.T) {
	secrets := map[string]*corev1.Secret{
		"good":    passwordSecret("good", map[string]string{"password": "s3cret\n"}),
		"nokey":   passwordSecret("nokey", map[string]string{"pass": "s3cret"}),
		"empty":   passwordSecret("empty", map[string]string{"password": " \n"}),
		"toolong": passwordSecret("toolong", map[string]string{"password": strings.Repeat("y", 81)}),
	}
	peers := []v1alpha1.BGPPeer{
		withPassword(bgpPeer("a-good", "198.18.0.1", "", ""), "good"),
		withPassword(bgpPeer("b-missing", "198.18.0.2", "", ""), "absent"),
		withPassword(bgpPeer("c-nokey", "198.18.0.3", "", ""), "nokey"),
		withPassword(bgpPeer("d-empty", "198.18.0.4", "", ""), "empty"),
		withPassword(bgpPeer("e-toolong", "198.18.0.5", "", ""), "toolong"),
		*bgpPeer("f-none", "198.18.0.6", "", ""),
	}
	p, errs := BuildBGP(nil, peers, secrets, nil, "east")
	kubetest.ErrorsContain(t, errs, []string{
		`BGPPeer b-missing: spec.passwordSecretRef.name: Secret "absent" is not found`,
		`BGPPeer c-nokey: spec.passwordSecretRef.name: Secret "nokey" has no key "password"`,
		`BGPPeer d-empty: spec.passwordSecretRef.name: Secret "empty": key "password" is empty`,
		`BGPPeer e-toolong: spec.passwordSecretRef.name: Secret "toolong": key "password" is longer than the 80 bytes`,
	})
	for _, err := range errs {
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "yyyy") {
			t.Errorf("error shows a password: %v", err)
		}
	}
	if len(p.Peers) != 2 || p.Peers[0].Password != "s3cret" || p.Peers[1].Password != "" {
		t.Fatalf("peers = %+v, want a-good with its Secret's password and f-none without", p.Peers)
	}

	_, errs = BuildBGP(nil, peers[:1], nil, nil, "east")
	kubetest.ErrorsContain(t, errs, []string{"BGPPeer a-good: spec.passwordSecretRef.name: the director watches no Secrets"})
}

// TestBGPSourceFollowsPasswordSecret: a changed password in the Secret
// emits a policy with the new password; a Secret of another namespace is
// not read.
func TestBGPSourceFollowsPasswordSecret(t *testing.T) {
	me := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "dir-1"}}
	sec := passwordSecret("tor-a-md5", map[string]string{"password": "first"})
	elsewhere := passwordSecret("tor-a-md5", map[string]string{"password": "other-namespace"})
	elsewhere.Namespace = "default"
	kc := fake.NewClientset(me, sec, elsewhere)
	peer := withPassword(bgpPeer("tor-a", "198.18.0.1", "", ""), "tor-a-md5")
	dc := kubetest.Dynamic(t, &peer)
	src, err := NewBGPSource(kc, dc, "dir-1", "east", "tlb-system", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	policies := kubetest.RunSource(t, src.Run)
	if p := policies.Next("first sync"); len(p.Peers) != 1 || p.Peers[0].Password != bgp.Password("first") {
		t.Fatalf("first policy's peers = %+v, want tor-a with the first password", p.Peers)
	}
	sec.Data["password"] = []byte("second")
	if _, err := kc.CoreV1().Secrets("tlb-system").Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := policies.Next("the password changed"); len(p.Peers) != 1 || p.Peers[0].Password != bgp.Password("second") {
		t.Fatalf("peers after the change = %+v, want the second password", p.Peers)
	}
	if err := kc.CoreV1().Secrets("tlb-system").Delete(t.Context(), sec.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := policies.Next("the Secret was deleted"); len(p.Peers) != 0 {
		t.Fatalf("peers after the Secret's deletion = %+v, want tor-a left out", p.Peers)
	}
}
