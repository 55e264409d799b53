package gatewayapi

import (
	"fmt"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// caBundleKey is the key of a ConfigMap holding a CA bundle: the Gateway
// API's core support (FrontendTLSValidation, BackendTLSPolicyValidation).
const caBundleKey = "ca.crt"

// kindConfigMap is the core kind CA certificate references name.
const kindConfigMap = "ConfigMap"

// caRef is one reference to a CA bundle, as a Gateway's frontend
// validation or a BackendTLSPolicy writes it.
type caRef struct {
	group, kind, namespace, name string
	field                        string // e.g. "spec.tls.frontend.default.validation.caCertificateRefs[0]"
}

// caFault says why a CA reference was not used.
type caFault int

const (
	// caKind: a kind other than a core ConfigMap.
	caKind caFault = iota + 1
	// caNotPermitted: another namespace, no ReferenceGrant.
	caNotPermitted
	// caInvalid: missing, no ca.crt, or not PEM certificates.
	caInvalid
)

// caProblem is a reference not used and why.
type caProblem struct {
	fault caFault
	msg   string // names the field and the object
}

// caBundle joins the PEM bundles refs name, read from ConfigMaps (key
// ca.crt), as an object of kind fromKind in namespace fromNS may refer to
// them; the references it could not use are in problems, in order. The
// bundle is nil when none could be used.
func (b *builder) caBundle(fromNS, fromKind string, refs []caRef) (bundle []byte, problems []caProblem) {
	for _, r := range refs {
		if r.group != "" || r.kind != kindConfigMap {
			problems = append(problems, caProblem{caKind, fmt.Sprintf("%s: kind %s is not supported; a CA bundle is a core ConfigMap with key %s", r.field, groupKind(r.group, r.kind), caBundleKey)})
			continue
		}
		ns := fromNS
		if r.namespace != "" {
			ns = r.namespace
		}
		if ns != fromNS && !b.granted(fromNS, gatewayv1.GroupName, fromKind, ns, "", kindConfigMap, r.name) {
			problems = append(problems, caProblem{caNotPermitted, fmt.Sprintf("%s: no ReferenceGrant in namespace %s lets %ss of %s refer to ConfigMap %s", r.field, ns, fromKind, fromNS, r.name)})
			continue
		}
		cm := b.configMaps[nn(ns, r.name)]
		if cm == nil {
			problems = append(problems, caProblem{caInvalid, fmt.Sprintf("%s: ConfigMap %s/%s not found", r.field, ns, r.name)})
			continue
		}
		data := cm.Data[caBundleKey]
		if err := model.CheckCABundle([]byte(data)); err != nil {
			problems = append(problems, caProblem{caInvalid, fmt.Sprintf("%s: ConfigMap %s/%s key %s: %v", r.field, ns, r.name, caBundleKey, err)})
			continue
		}
		if len(bundle) > 0 && !strings.HasSuffix(string(bundle), "\n") {
			bundle = append(bundle, '\n')
		}
		bundle = append(bundle, data...)
	}
	return bundle, problems
}

// groupKind writes a kind with its group, "core" for the core group.
func groupKind(group, kind string) string {
	if group == "" {
		return "core/" + kind
	}
	return group + "/" + kind
}

// caMessages joins the messages of problems.
func caMessages(problems []caProblem) string {
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.msg
	}
	return strings.Join(msgs, "; ")
}
