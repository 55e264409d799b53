package gatewayapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
)

// The test world: class "tlb" (config "edge", group "edge"), Gateway
// infra/gw with listeners http (80), https (443, *.example.com, Secret
// infra/wild) and tls (8443, Passthrough), VIP 203.0.113.10; Service
// app/web port 8080 (named "http") with two ready endpoints and one not
// ready; namespaces infra and app (label team=a).

var testNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const testVIP = "203.0.113.10"

func ptr[T any](v T) *T { return &v }

func meta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 3, CreationTimestamp: metav1.NewTime(testNow.Add(-time.Hour))}
}

// testPair returns a PEM certificate for dnsNames and its key.
func testPair(t testing.TB, dnsNames ...string) (chain, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"}, DNSNames: dnsNames,
		NotBefore: testNow.Add(-time.Hour), NotAfter: testNow.Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})
}

func tlsSecret(t testing.TB, ns, name string, dnsNames ...string) *corev1.Secret {
	chain, key := testPair(t, dnsNames...)
	return &corev1.Secret{ObjectMeta: meta(ns, name), Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: chain, corev1.TLSPrivateKeyKey: key}}
}

func httpListener(name string, port int32, hostname string) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: gatewayv1.HTTPProtocolType}
	if hostname != "" {
		l.Hostname = ptr(gatewayv1.Hostname(hostname))
	}
	return l
}

func httpsListener(name string, port int32, hostname string, secrets ...gatewayv1.SecretObjectReference) gatewayv1.Listener {
	l := httpListener(name, port, hostname)
	l.Protocol = gatewayv1.HTTPSProtocolType
	l.TLS = &gatewayv1.ListenerTLSConfig{Mode: ptr(gatewayv1.TLSModeTerminate), CertificateRefs: secrets}
	return l
}

func tlsListener(name string, port int32, hostname string) gatewayv1.Listener {
	l := httpListener(name, port, hostname)
	l.Protocol = gatewayv1.TLSProtocolType
	l.TLS = &gatewayv1.ListenerTLSConfig{Mode: ptr(gatewayv1.TLSModePassthrough)}
	return l
}

func secretRef(ns, name string) gatewayv1.SecretObjectReference {
	r := gatewayv1.SecretObjectReference{Name: gatewayv1.ObjectName(name)}
	if ns != "" {
		r.Namespace = ptr(gatewayv1.Namespace(ns))
	}
	return r
}

func testGateway(ns, name string, ls ...gatewayv1.Listener) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{ObjectMeta: meta(ns, name), Spec: gatewayv1.GatewaySpec{GatewayClassName: "tlb", Listeners: ls}}
}

// allNamespaces lets routes of every namespace attach to l.
func allNamespaces(l gatewayv1.Listener) gatewayv1.Listener {
	l.AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}
	return l
}

func parentRef(ns, name, section string) gatewayv1.ParentReference {
	r := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)}
	if ns != "" {
		r.Namespace = ptr(gatewayv1.Namespace(ns))
	}
	if section != "" {
		r.SectionName = ptr(gatewayv1.SectionName(section))
	}
	return r
}

func backendRef(ns, name string, port int32, weight *int32) gatewayv1.BackendRef {
	r := gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr(port)}, Weight: weight}
	if ns != "" {
		r.Namespace = ptr(gatewayv1.Namespace(ns))
	}
	return r
}

func httpBackends(refs ...gatewayv1.BackendRef) []gatewayv1.HTTPBackendRef {
	out := make([]gatewayv1.HTTPBackendRef, len(refs))
	for i, r := range refs {
		out[i] = gatewayv1.HTTPBackendRef{BackendRef: r}
	}
	return out
}

// testHTTPRoute is app/name attached to infra/gw's http listener,
// forwarding everything to app/web:8080.
func testHTTPRoute(name string, rules ...gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
	if len(rules) == 0 {
		rules = []gatewayv1.HTTPRouteRule{{BackendRefs: httpBackends(backendRef("", "web", 8080, nil))}}
	}
	return &gatewayv1.HTTPRoute{ObjectMeta: meta("app", name), Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parentRef("infra", "gw", "http")}},
		Rules:           rules,
	}}
}

func testService(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: meta(ns, name), Spec: corev1.ServiceSpec{Ports: ports}}
}

func endpointSlice(ns, svc, port string, portNum int32, ready map[string]bool) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: meta(ns, svc+"-x"), AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: ptr(port), Port: ptr(portNum), Protocol: ptr(corev1.ProtocolTCP)}}}
	s.Labels = map[string]string{discoveryv1.LabelServiceName: svc}
	for ip, ok := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(ok)}})
	}
	return s
}

// world returns the test world.
func world(t testing.TB) Inputs {
	t.Helper()
	return Inputs{
		Classes: []*gatewayv1.GatewayClass{{
			ObjectMeta: metav1.ObjectMeta{Name: "tlb", Generation: 2},
			Spec: gatewayv1.GatewayClassSpec{ControllerName: ControllerName, ParametersRef: &gatewayv1.ParametersReference{
				Group: tlbv1alpha1.GroupName, Kind: tlbv1alpha1.KindGatewayClassConfig, Name: "edge"}},
		}},
		ClassConfigs: []*tlbv1alpha1.GatewayClassConfig{{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: tlbv1alpha1.GatewayClassConfigSpec{GatewayGroup: "edge"}}},
		Gateways: []*gatewayv1.Gateway{testGateway("infra", "gw",
			allNamespaces(httpListener("http", 80, "")),
			allNamespaces(httpsListener("https", 443, "*.example.com", secretRef("", "wild"))),
			allNamespaces(tlsListener("tls", 8443, "")),
		)},
		Namespaces: []*corev1.Namespace{
			{ObjectMeta: metav1.ObjectMeta{Name: "infra"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{"team": "a"}}},
		},
		Services: []*corev1.Service{testService("app", "web", corev1.ServicePort{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP})},
		EndpointSlices: []*discoveryv1.EndpointSlice{endpointSlice("app", "web", "http", 9090,
			map[string]bool{"10.0.0.2": true, "10.0.0.1": true, "10.0.0.3": false})},
		Secrets:   []*corev1.Secret{tlsSecret(t, "infra", "wild", "*.example.com")},
		Addresses: map[types.NamespacedName][]netip.Addr{{Namespace: "infra", Name: "gw"}: {netip.MustParseAddr(testVIP)}},
		Now:       testNow,
	}
}

// cond returns the condition of type typ in cs, failing when absent.
func cond(t *testing.T, cs []metav1.Condition, typ string) metav1.Condition {
	t.Helper()
	for _, c := range cs {
		if c.Type == typ {
			return c
		}
	}
	t.Fatalf("no condition %s in %+v", typ, cs)
	return metav1.Condition{}
}

// wantCond checks status and reason of condition typ in cs.
func wantCond(t *testing.T, cs []metav1.Condition, typ string, status bool, reason string) {
	t.Helper()
	c := cond(t, cs, typ)
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	if c.Status != s || c.Reason != reason {
		t.Fatalf("condition %s = %s/%s (%s); want %s/%s", typ, c.Status, c.Reason, c.Message, s, reason)
	}
}

var gwKey = types.NamespacedName{Namespace: "infra", Name: "gw"}
