package kube

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/bgp"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
)

// maxMD5PasswordBytes is the longest TCP MD5 key (RFC 2385) Linux accepts.
const maxMD5PasswordBytes = 80

// peerPassword returns the MD5 password of BGPPeer bp from the Secret its
// passwordSecretRef names in secrets (by name), surrounding white space
// trimmed as from a password file; "" without a reference. Errors name
// the peer, the field and the Secret, never the password.
func peerPassword(bp v1alpha1.BGPPeer, secrets map[string]*corev1.Secret) (bgp.Password, error) {
	ref := bp.Spec.PasswordSecretRef
	if ref == nil {
		return "", nil
	}
	bad := func(reason string, args ...any) error {
		return &sharedkube.ObjectError{Kind: "BGPPeer", Name: bp.Name, Field: "spec.passwordSecretRef.name",
			Reason: fmt.Sprintf(reason, args...) + "; left out"}
	}
	if secrets == nil {
		return "", bad("the director watches no Secrets (run it with --namespace)")
	}
	sec := secrets[ref.Name]
	if sec == nil {
		return "", bad("Secret %q is not found in the directors' namespace", ref.Name)
	}
	raw, ok := sec.Data[v1alpha1.BGPPasswordKey]
	if !ok {
		return "", bad("Secret %q has no key %q", ref.Name, v1alpha1.BGPPasswordKey)
	}
	pw := strings.TrimSpace(string(raw))
	switch {
	case pw == "":
		return "", bad("Secret %q: key %q is empty", ref.Name, v1alpha1.BGPPasswordKey)
	case len(pw) > maxMD5PasswordBytes:
		return "", bad("Secret %q: key %q is longer than the %d bytes TCP MD5 allows", ref.Name, v1alpha1.BGPPasswordKey, maxMD5PasswordBytes)
	}
	return bgp.Password(pw), nil
}
