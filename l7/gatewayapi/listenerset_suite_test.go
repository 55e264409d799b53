package gatewayapi

import (
	"bytes"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// suiteInputs returns the test world's class with the objects of the
// conformance suite's manifest file (conformance/tests/<file>, of the
// module version go.mod pins) and the suite's base manifests, every
// Gateway holding testVIP; the suite's Secret gateway-conformance-web-
// backend/certificate is made here, as the suite makes it in code.
func suiteInputs(t *testing.T, file string) Inputs {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api/conformance").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("find the conformance module: %v", err)
	}
	dir := string(bytes.TrimSpace(out))
	w := world(t)
	in := Inputs{Classes: w.Classes, ClassConfigs: w.ClassConfigs, Now: testNow,
		Addresses: map[types.NamespacedName][]netip.Addr{},
		Secrets:   []*corev1.Secret{tlsSecret(t, "gateway-conformance-web-backend", "certificate", "*.com")},
	}
	for _, f := range []string{filepath.Join(dir, "base", "manifests.yaml"), filepath.Join(dir, "tests", file)} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.ReplaceAll(data, []byte("{GATEWAY_CLASS_NAME}"), []byte("tlb"))
		for doc := range strings.SplitSeq(string(data), "\n---") {
			addManifest(t, &in, []byte(doc))
		}
	}
	for _, g := range in.Gateways {
		in.Addresses[nn(g.Namespace, g.Name)] = []netip.Addr{netip.MustParseAddr(testVIP)}
	}
	return in
}

// addManifest decodes one YAML document into in, by kind (others are
// dropped).
func addManifest(t *testing.T, in *Inputs, doc []byte) {
	t.Helper()
	var head struct{ Kind string }
	if err := yaml.Unmarshal(doc, &head); err != nil {
		t.Fatal(err)
	}
	switch head.Kind {
	case "Gateway":
		in.Gateways = append(in.Gateways, decode[gatewayv1.Gateway](t, doc))
	case kindListenerSet:
		in.ListenerSets = append(in.ListenerSets, decode[gatewayv1.ListenerSet](t, doc))
	case kindHTTPRoute:
		in.HTTPRoutes = append(in.HTTPRoutes, decode[gatewayv1.HTTPRoute](t, doc))
	case kindTLSRoute:
		in.TLSRoutes = append(in.TLSRoutes, decode[gatewayv1.TLSRoute](t, doc))
	case "ReferenceGrant":
		in.ReferenceGrants = append(in.ReferenceGrants, decode[gatewayv1.ReferenceGrant](t, doc))
	case "Namespace":
		in.Namespaces = append(in.Namespaces, decode[corev1.Namespace](t, doc))
	case kindService:
		in.Services = append(in.Services, decode[corev1.Service](t, doc))
	}
}

func decode[T any](t *testing.T, doc []byte) *T {
	t.Helper()
	v := new(T)
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
	return v
}
