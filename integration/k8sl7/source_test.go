//go:build k8s

package k8sl7

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/integration/tlstest"
	"github.com/tlbproject/tlb/l7/dsl"
	l7kube "github.com/tlbproject/tlb/l7/kube"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	tlbxds "github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/l7/xdsbuild"
)

const ns = "shop"

// The DSL files that say what the Kubernetes objects below say.
const (
	webYAML = `kind: gateway/service/v1
name: shop.web
group: edge
hosts: [shop.example.com, "*.shop.example.com"]
listeners: [shop.web/https]
timeout: 30s
idleTimeout: 5m
upstreams:
  - name: https
    endpoints: ["198.18.0.10:8443", "198.18.0.11:8443"]
routes:
  - prefix: /cart
    target: https
`
	webGatewayYAML = `kind: gateway/gateway/v1
name: shop.web
group: edge
listeners:
  - name: https
    vip: 203.0.113.10
    port: 443
    protocol: HTTPS
    certificates:
      - name: web-tls
        sni: [shop.example.com, "*.shop.example.com"]
        certFile: tls.crt
        keyFile: tls.key
`
	apiYAML = `kind: gateway/service/v1
name: shop.api
group: edge
upstreams:
  - name: grpc
    http2: true
    endpoints: ["198.18.0.20:9090"]
routes:
  - prefix: /
    target: grpc
`
)

// fileModel loads the DSL files with the file-mode source.
func fileModel(t *testing.T, chain, key []byte) model.Config {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string][]byte{"web.yaml": []byte(webYAML), "web-gateway.yaml": []byte(webGatewayYAML), "api.yaml": []byte(apiYAML), "tls.crt": chain, "tls.key": key} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, errs, err := dsl.NewDir(dir, time.Now).Load()
	if err != nil || len(errs) > 0 {
		t.Fatalf("load the DSL files: %v %v", err, errs)
	}
	return cfg
}

// createObjects creates, in the namespace shop, what the DSL files say:
// Service web (HTTPS on its VIP with a TLS Secret) and Service api (gRPC,
// no VIP), with their EndpointSlices.
func createObjects(t *testing.T, ctx context.Context, kc kubernetes.Interface, chain, key []byte) {
	t.Helper()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
	must(kc.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: chain, corev1.TLSPrivateKeyKey: key},
	}, metav1.CreateOptions{}))
	class := "tlb.io/l4"
	no := false
	web, err := kc.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{
			api.AnnotationL7:            "true",
			api.AnnotationL7Hosts:       "shop.example.com,*.shop.example.com",
			api.AnnotationL7PathPrefix:  "/cart",
			api.AnnotationL7Group:       "edge",
			api.AnnotationL7Timeout:     "30s",
			api.AnnotationL7IdleTimeout: "5m",
			api.AnnotationL7TLSSecret:   "web-tls",
		}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerClass: &class, AllocateLoadBalancerNodePorts: &no,
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443), Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	must(web, err)
	// The VIP the ipam controller would write.
	web.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.10"}}
	must(kc.CoreV1().Services(ns).UpdateStatus(ctx, web, metav1.UpdateOptions{}))
	must(kc.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Annotations: map[string]string{
			api.AnnotationL7: "true", api.AnnotationL7Group: "edge", api.AnnotationL7HTTP2: "true", api.AnnotationL7Port: "grpc",
		}},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "metrics", Port: 9100, Protocol: corev1.ProtocolTCP},
			{Name: "grpc", Port: 9000, TargetPort: intstr.FromInt32(9090), Protocol: corev1.ProtocolTCP},
		}},
	}, metav1.CreateOptions{}))
	must(kc.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{}))
	must(kc.DiscoveryV1().EndpointSlices(ns).Create(ctx, endpointSlice("web-1", "web", "https", 8443,
		map[string]bool{"198.18.0.10": true, "198.18.0.11": true, "198.18.0.12": false}), metav1.CreateOptions{}))
	must(kc.DiscoveryV1().EndpointSlices(ns).Create(ctx, endpointSlice("api-1", "api", "grpc", 9090,
		map[string]bool{"198.18.0.20": true}), metav1.CreateOptions{}))
	must(kc.DiscoveryV1().EndpointSlices(ns).Create(ctx, endpointSlice("plain-1", "plain", "http", 80,
		map[string]bool{"198.18.0.30": true}), metav1.CreateOptions{}))
}

// endpointSlice is a slice of Service svc with one port and the given
// addresses, each ready or not.
func endpointSlice(name, svc, portName string, port int32, ready map[string]bool) *discoveryv1.EndpointSlice {
	tcp := corev1.ProtocolTCP
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &tcp}},
	}
	addrs := make([]string, 0, len(ready))
	for a := range ready {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	for _, a := range addrs {
		r := ready[a]
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: &r}})
	}
	return s
}

func endpointsOf(cfg model.Config, service string) []string {
	var out []string
	for _, s := range cfg.Services {
		if s.Name == service {
			for _, u := range s.Upstreams {
				for _, e := range u.Endpoints {
					out = append(out, e.Addr.String())
				}
			}
		}
	}
	return out
}

// claEndpoints returns the endpoints of cluster in an EDS response.
func claEndpoints(r *discovery.DiscoveryResponse, cluster string) ([]string, error) {
	var out []string
	for _, a := range r.Resources {
		var cla endpoint.ClusterLoadAssignment
		if err := a.UnmarshalTo(&cla); err != nil {
			return nil, err
		}
		if cla.ClusterName != cluster {
			continue
		}
		for _, l := range cla.Endpoints {
			for _, e := range l.LbEndpoints {
				sa := e.GetEndpoint().GetAddress().GetSocketAddress()
				out = append(out, fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue()))
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// TestSourceAgainstAPIServer runs the L7 source against the real API
// server, publishing into the real xDS server, and follows one setup
// through its changes.
func TestSourceAgainstAPIServer(t *testing.T) {
	ctx := ctxFor(t, 3*time.Minute)
	kc := kubernetes.NewForConfigOrDie(server.Config)
	chain, key := tlstest.SelfSigned(t, "shop.example.com", "*.shop.example.com")
	createObjects(t, ctx, kc, chain, key)
	want := withoutOrigins(fileModel(t, chain, key))

	log, logs := captureLog(t)
	srv := tlbxds.New(ctx, log, prometheus.NewRegistry(), time.Now, serverOptions)
	pub := pipeline.New(model.NewResolver(), resolveOptions, time.Now, xdsbuild.New(srv))
	addr := startXDS(t, ctx, srv)
	src, err := l7kube.NewSource(kc, log, sourceOptions)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	runSource(ctx, t, src, func(ctx context.Context, cfg model.Config) []model.Problem {
		rep := pub.Publish(ctx, cfg)
		rec.add(cfg) // after Publish: a test that sees the model may expect it served
		log.Info("published", "changed", rep.Changed, "invalid", fmt.Sprint(rep.Invalid), "problems", fmt.Sprint(rep.Problems))
		return rep.Problems
	})

	t.Run("model equals the file mode's", func(t *testing.T) {
		eventually(t, 30*time.Second, "the source's model equals the DSL model", func() (bool, string) {
			got, n := rec.last()
			if n == 0 {
				return false, "nothing published"
			}
			got = withoutOrigins(got)
			return reflect.DeepEqual(got, want), fmt.Sprintf("\n got  %+v\n want %+v", got, want)
		})
		got, _ := rec.last()
		if got.Services[1].Origin != "shop/web" || got.Certificates[0].Origin != "shop/web-tls" || got.Certificates[0].Gateway.Origin != "shop/web" {
			t.Errorf("origins: service %q, certificate %q of gateway %q; want shop/web, shop/web-tls and shop/web", got.Services[1].Origin, got.Certificates[0].Origin, got.Certificates[0].Gateway.Origin)
		}
	})

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	// In ADS mode a state-of-the-world EDS request must list every
	// ClusterLoadAssignment of the group, as Envoy does after CDS.
	eds := openADS(t, ctx, addr, "edge", resource.EndpointType, "shop.api/grpc", "shop.web/https")
	t.Run("xDS serves the endpoints and the certificate", func(t *testing.T) {
		eds.waitFor(t, 30*time.Second, "EDS for shop.web/https", func(r *discovery.DiscoveryResponse) (bool, string) {
			got, err := claEndpoints(r, "shop.web/https")
			return err == nil && reflect.DeepEqual(got, []string{"198.18.0.10:8443", "198.18.0.11:8443"}), fmt.Sprint(got, err)
		})
		sds := openADS(t, ctx, addr, "edge", resource.SecretType, "shop.web.web-tls")
		sds.waitFor(t, 30*time.Second, "SDS secret shop.web.web-tls", func(r *discovery.DiscoveryResponse) (bool, string) {
			if len(r.Resources) != 1 {
				return false, fmt.Sprintf("%d secrets", len(r.Resources))
			}
			var s tlsv3.Secret
			if err := r.Resources[0].UnmarshalTo(&s); err != nil {
				return false, err.Error()
			}
			c := s.GetTlsCertificate()
			return s.Name == "shop.web.web-tls" && string(c.GetCertificateChain().GetInlineBytes()) == string(chain) &&
				string(c.GetPrivateKey().GetInlineBytes()) == string(key), "secret " + s.Name + " differs"
		})
	})

	t.Run("an endpoint change updates the model and EDS", func(t *testing.T) {
		s := endpointSlice("web-1", "web", "https", 8443, map[string]bool{"198.18.0.11": true, "198.18.0.12": true})
		cur, err := kc.DiscoveryV1().EndpointSlices(ns).Get(ctx, "web-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.ResourceVersion = cur.ResourceVersion
		if _, err := kc.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		wantEPs := []string{"198.18.0.11:8443", "198.18.0.12:8443"}
		eventually(t, 30*time.Second, "model endpoints of shop.web", func() (bool, string) {
			got, _ := rec.last()
			e := endpointsOf(got, "shop.web")
			return reflect.DeepEqual(e, wantEPs), fmt.Sprint(e)
		})
		eds.waitFor(t, 30*time.Second, "EDS update for shop.web/https", func(r *discovery.DiscoveryResponse) (bool, string) {
			got, err := claEndpoints(r, "shop.web/https")
			return err == nil && reflect.DeepEqual(got, wantEPs), fmt.Sprint(got, err)
		})
	})

	t.Run("a rotated Secret reaches the model and SDS", func(t *testing.T) {
		chain2, key2 := tlstest.SelfSigned(t, "shop.example.com")
		sec, err := kc.CoreV1().Secrets(ns).Get(ctx, "web-tls", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sec.Data = map[string][]byte{corev1.TLSCertKey: chain2, corev1.TLSPrivateKeyKey: key2}
		if _, err := kc.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the new certificate in the model", func() (bool, string) {
			got, _ := rec.last()
			return len(got.Certificates) == 1 && string(got.Certificates[0].Chain) == string(chain2) &&
				got.Certificates[0].Key.Equal(model.NewPrivateKey(key2)), "old certificate"
		})
		sds := openADS(t, ctx, addr, "edge", resource.SecretType, "shop.web.web-tls")
		sds.waitFor(t, 30*time.Second, "the new key over SDS", func(r *discovery.DiscoveryResponse) (bool, string) {
			var s tlsv3.Secret
			if len(r.Resources) != 1 || r.Resources[0].UnmarshalTo(&s) != nil {
				return false, "no secret"
			}
			return string(s.GetTlsCertificate().GetPrivateKey().GetInlineBytes()) == string(key2), "old key"
		})
		key = append(key, key2...) // neither key may be logged
	})

	t.Run("an invalid annotation gives an Event and leaves that Service out, alone", func(t *testing.T) {
		before, _ := rec.last()
		web, err := kc.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		web.Annotations[api.AnnotationL7Timeout] = "5 parsecs"
		if _, err := kc.CoreV1().Services(ns).Update(ctx, web, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "a Warning Event on Service shop/web", func() (bool, string) {
			evs, err := kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,involvedObject.kind=Service"})
			if err != nil {
				return false, err.Error()
			}
			for _, e := range evs.Items {
				if e.Reason == l7kube.ReasonInvalidAnnotation && e.Type == corev1.EventTypeWarning &&
					strings.Contains(e.Message, "annotation tlb.io/l7-timeout") && strings.Contains(e.Message, `"5 parsecs"`) {
					return true, ""
				}
			}
			return false, fmt.Sprintf("%d events, none InvalidL7Annotation naming tlb.io/l7-timeout", len(evs.Items))
		})
		// The rest keeps being served and updated: move api's endpoint.
		s := endpointSlice("api-1", "api", "grpc", 9090, map[string]bool{"198.18.0.21": true})
		cur, err := kc.DiscoveryV1().EndpointSlices(ns).Get(ctx, "api-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.ResourceVersion = cur.ResourceVersion
		if _, err := kc.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "api moves while web is left out", func() (bool, string) {
			got, _ := rec.last()
			if e := endpointsOf(got, "shop.api"); !reflect.DeepEqual(e, []string{"198.18.0.21:9090"}) {
				return false, fmt.Sprint("api endpoints ", e)
			}
			return len(got.Services) == 1 && len(got.Gateways) == 0, fmt.Sprintf("services %d, gateways %d", len(got.Services), len(got.Gateways))
		})
		// Fixed, it comes back as it was.
		web, err = kc.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		web.Annotations[api.AnnotationL7Timeout] = "30s"
		if _, err := kc.CoreV1().Services(ns).Update(ctx, web, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "web back once fixed", func() (bool, string) {
			got, _ := rec.last()
			return len(got.Services) == 2 && reflect.DeepEqual(got.Services[1], before.Services[1]) && reflect.DeepEqual(got.Gateways, before.Gateways),
				fmt.Sprintf("web now %+v, was %+v", got.Services, before.Services[1])
		})
	})

	t.Run("a deleted Service leaves the model", func(t *testing.T) {
		if err := kc.CoreV1().Services(ns).Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "shop.api gone", func() (bool, string) {
			got, _ := rec.last()
			var names []string
			for _, s := range got.Services {
				names = append(names, s.Name)
			}
			return reflect.DeepEqual(names, []string{"shop.web"}), fmt.Sprint(names)
		})
	})

	t.Run("the key never appears in the logs", func(t *testing.T) {
		out := logs.String()
		if !strings.Contains(out, "L7 model changed") || !strings.Contains(out, "tlb.io/l7-timeout") {
			t.Fatalf("the log capture is missing the source's lines:\n%s", out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(key)), "\n") {
			if !strings.HasPrefix(line, "-----") && strings.Contains(out, line) {
				t.Errorf("key material %q in the logs", line)
			}
		}
		if b64 := base64.StdEncoding.EncodeToString(key); strings.Contains(out, b64[30:70]) {
			t.Error("base64 of the key in the logs")
		}
	})
}
