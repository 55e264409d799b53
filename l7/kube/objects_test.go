package kube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/netip"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testNow is the clock of every Build in the tests.
var testNow = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

// testChain and testKey are a throw-away pair made for the tests, valid
// around testNow; testKeyLine is a line of the key that must never appear
// in a message.
var (
	testChain, testKey = newTestPair(testNow.Add(-time.Hour), testNow.Add(90*24*time.Hour))
	testKeyLine        = strings.Split(testKey, "\n")[1]
)

func newTestPair(notBefore, notAfter time.Time) (chain, key string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "shop.example.com"}, NotBefore: notBefore, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		panic(err)
	}
	kd, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}))
}

func service(ns, name string, ann map[string]string, vip string, ports ...corev1.ServicePort) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann},
		Spec:       corev1.ServiceSpec{Ports: ports},
	}
	if vip != "" {
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: vip}}
	}
	return s
}

func port(name string, n int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: n, Protocol: corev1.ProtocolTCP}
}

type ep struct {
	addr  string
	ready *bool
}

func slice(ns, svc, name, portName string, portNum int32, eps ...ep) *discoveryv1.EndpointSlice {
	tcp := corev1.ProtocolTCP
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &portNum, Protocol: &tcp}},
	}
	for _, e := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.addr}, Conditions: discoveryv1.EndpointConditions{Ready: e.ready}})
	}
	return s
}

func tlsSecret(ns, name string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: []byte(testChain), corev1.TLSPrivateKeyKey: []byte(testKey)},
	}
}

func boolp(b bool) *bool { return &b }

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
