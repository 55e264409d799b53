//go:build k8s

package k8s

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/api"
	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/internal/leader"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/gatewayctl"
)

// TestRBACGatewayController: the Gateway controller's ClusterRole and
// leader Role (deploy/gateway/rbac.yaml) are exactly what the real
// controller uses, elected through Lease tlb-system/tlb-gateway-controller
// as ServiceAccount tlb-gateway-controller.
//
// Enough: it syncs every informer (without one it never starts), creates
// a Gateway's VIP Service, updates it when the listeners change, writes
// the status of the GatewayClass, the Gateway (status.addresses once the
// IPAM gave the VIP), an HTTPRoute, a GRPCRoute, a TLSRoute, a
// ListenerSet and a TrafficPolicy, records Events on Gateways (and patches a repeated one:
// a second Gateway whose VIP Service name is taken), and deletes the VIP
// Service when the Gateway goes; none of its requests is Forbidden.
//
// No more: every request of the controller's clients is recorded, and
// each (group, resource, verb) a rule of the file grants must have been
// used by a successful request; an unused grant fails the test by name.
// It grants no get of a Secret, no write to a Gateway's spec or a
// Service's status, no Pod and no other Lease (checked by clients whose
// requests are not recorded).
func TestRBACGatewayController(t *testing.T) {
	const rbacFile = "deploy/gateway/rbac.yaml"
	installRBAC(t, rbacFile)
	grants := grantsOf(t, rbacFile)
	ctx := context.Background()
	kc, dc := clients(t)
	agc, err := gwclient.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns, identity := "rbac-gateway", "rbac-gateway-0"
	ensureNamespace(t, kc, ns)
	createPool(t, dc, "rbac-gateway", "rbacgateway", 0, "rbac-gateway-pool", "198.51.100.96/29")
	createObject(t, dc, gatewayctl.ClassConfigResource, &tlbv1alpha1.GatewayClassConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: tlbv1alpha1.SchemeGroupVersion.String(), Kind: tlbv1alpha1.KindGatewayClassConfig},
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-gateway"},
		Spec:       tlbv1alpha1.GatewayClassConfigSpec{Environment: "rbacgateway"},
	})
	if _, err := agc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-gateway"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName, ParametersRef: &gatewayv1.ParametersReference{
			Group: tlbv1alpha1.GroupName, Kind: tlbv1alpha1.KindGatewayClassConfig, Name: "rbac-gateway"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleteServicesAtCleanup(t, kc, ns)
	// The IPAM runs as the admin: its own role is TestRBACIPAM's.
	startController(t, kc, dc, "")

	path := serviceAccountKubeconfig(t, "tlb-gateway-controller")
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	// tk, td and tg are the test's own requests as the ServiceAccount
	// (waiting for RBAC, the Forbidden checks): not recorded. sk, sd and
	// sg are the controller's, and every request they make is.
	tk, td, tg := kubernetes.NewForConfigOrDie(cfg), dynamic.NewForConfigOrDie(cfg), gwclient.NewForConfigOrDie(cfg)
	rec := &requestRecorder{}
	recorded := rest.CopyConfig(cfg)
	rec.wrap(recorded)
	sk, sd, sg := kubernetes.NewForConfigOrDie(recorded), dynamic.NewForConfigOrDie(recorded), gwclient.NewForConfigOrDie(recorded)
	eventually(t, 30*time.Second, "tlb-gateway-controller may list Gateways and get its Lease (RBAC in effect)", func() (bool, string) {
		if _, err := tg.GatewayV1().Gateways("").List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			return false, err.Error()
		}
		_, err := tk.CoordinationV1().Leases("tlb-system").Get(ctx, "tlb-gateway-controller", metav1.GetOptions{})
		return err == nil || apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	log := rbacLog()
	ctrl, err := gatewayctl.New(gatewayctl.Options{Kube: sk, Gateway: sg, Dynamic: sd, Log: log, Identity: identity})
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, "gateway controller", func(ctx context.Context) error {
		return leader.Run(ctx, leader.Election{
			Client: sk, Namespace: "tlb-system", Name: "tlb-gateway-controller", Identity: identity,
			LeaseDuration: 6 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: time.Second, Log: log,
		}, func(ctx context.Context) {
			if err := ctrl.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				log.Error("gateway controller", "err", err)
			}
		})
	})

	// web: an HTTP listener for the HTTPRoute and the GRPCRoute, a TLS
	// Passthrough one for the TLSRoute.
	gws := agc.GatewayV1().Gateways(ns)
	passthrough := gatewayv1.TLSModePassthrough
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "rbac-gateway", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
			{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, TLS: &gatewayv1.ListenerTLSConfig{Mode: &passthrough}},
		}},
	}
	if _, err := gws.Create(ctx, gw, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vipName := gatewayctl.VIPServiceName("web")
	eventually(t, 60*time.Second, "web has a VIP from rbac-gateway-pool in status.addresses", func() (bool, string) {
		g, err := gws.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(g.Status.Addresses) != 1 {
			return false, fmt.Sprintf("status %+v", g.Status)
		}
		a, err := netip.ParseAddr(g.Status.Addresses[0].Value)
		return err == nil && netip.MustParsePrefix("198.51.100.96/29").Contains(a), fmt.Sprintf("status %+v", g.Status)
	})
	eventually(t, 30*time.Second, "VIPServiceCreated Event on Gateway web", func() (bool, string) {
		evs, err := kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Gateway,involvedObject.name=web"})
		if err != nil {
			return false, err.Error()
		}
		return hasEvent(evs.Items, gatewayctl.ReasonVIPServiceCreated, vipName), fmt.Sprintf("events %v", evs.Items)
	})
	eventually(t, 30*time.Second, "GatewayClass rbac-gateway Accepted by the controller", func() (bool, string) {
		gc, err := agc.GatewayV1().GatewayClasses().Get(ctx, "rbac-gateway", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range gc.Status.Conditions {
			if c.Type == string(gatewayv1.GatewayClassConditionStatusAccepted) && c.Status == metav1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("status %+v", gc.Status)
	})
	// A new listener port: the VIP Service is updated.
	g, err := gws.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.Spec.Listeners = append(g.Spec.Listeners, gatewayv1.Listener{Name: "alt", Port: 8080, Protocol: gatewayv1.HTTPProtocolType})
	if _, err := gws.Update(ctx, g, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, vipName+" has ports 80, 443 and 8080", func() (bool, string) {
		s, err := kc.CoreV1().Services(ns).Get(ctx, vipName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(s.Spec.Ports) == 3 && s.Spec.Ports[2].Port == 8080 && s.Labels[api.LabelOwningGateway] == ns+".web",
			fmt.Sprintf("ports %+v", s.Spec.Ports)
	})

	createRoutesAndPolicy(t, kc, agc, dc, ns, "web")
	attachListenerSet(t, agc, ns, "web")
	repeatConflictEvent(t, kc, agc, ns)
	touchLease(t, kc, rec)

	assertForbidden(t, "tlb-gateway-controller", sharedkube.Clients{Kube: tk, Dynamic: td}, []forbidden{
		{"get a Secret", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "any", metav1.GetOptions{})
			return err
		}},
		{"update services/status", func(ctx context.Context, c sharedkube.Clients) error {
			s, err := kc.CoreV1().Services(ns).Get(ctx, vipName, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			_, err = c.Kube.CoreV1().Services(ns).UpdateStatus(ctx, s, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		{"list Pods", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"get another Lease", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoordinationV1().Leases("tlb-system").Get(ctx, "tlb-ipam", metav1.GetOptions{})
			return err
		}},
		{"create a Lease in another namespace", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "tlb-gateway-controller"}},
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
	})
	for name, call := range map[string]func() error{
		"update a Gateway's spec": func() error {
			g, err := gws.Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			_, err = tg.GatewayV1().Gateways(ns).Update(ctx, g, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		},
		"delete a Gateway": func() error {
			return tg.GatewayV1().Gateways(ns).Delete(ctx, "web", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		},
		"get a Gateway by name": func() error {
			_, err := tg.GatewayV1().Gateways(ns).Get(ctx, "web", metav1.GetOptions{})
			return err
		},
	} {
		t.Run("forbidden: "+name, func(t *testing.T) {
			if err := call(); !apierrors.IsForbidden(err) {
				t.Errorf("tlb-gateway-controller: %s: err = %v, want Forbidden", name, err)
			}
		})
	}

	// The Gateway goes: its VIP Service is deleted by the controller.
	if err := gws.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, vipName+" deleted", func() (bool, string) {
		_, err := kc.CoreV1().Services(ns).Get(ctx, vipName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})

	// Every grant was used, and nothing the controller asked was refused.
	eventually(t, 30*time.Second, "every grant of "+rbacFile+" used by a successful request of the controller", func() (bool, string) {
		var unused []string
		for _, g := range grants {
			if _, ok := usedBy(g, rec.requests()); !ok {
				unused = append(unused, g.String())
			}
		}
		return len(unused) == 0, fmt.Sprintf("%d of %d grants unused: %s", len(unused), len(grants), strings.Join(unused, "; "))
	})
	reqs := rec.requests()
	for _, g := range grants {
		r, _ := usedBy(g, reqs)
		t.Logf("grant %s: used by %s %s (%d)", g, r.method, r.url, r.status)
	}
	for _, r := range reqs {
		if r.status == 403 {
			t.Errorf("tlb-gateway-controller was refused %s (%s %s): a rule is missing from %s", r.requestAttributes, r.method, r.url, rbacFile)
		}
	}
	t.Logf("%d requests recorded", len(reqs))
}

// usedBy returns the first request that g allowed and that succeeded.
func usedBy(g grant, reqs []recordedRequest) (recordedRequest, bool) {
	i := slices.IndexFunc(reqs, func(r recordedRequest) bool {
		return r.status > 0 && r.status < 400 && g.allows(r.requestAttributes)
	})
	if i < 0 {
		return recordedRequest{}, false
	}
	return reqs[i], true
}

// createRoutesAndPolicy creates, as the admin, an HTTPRoute, a GRPCRoute,
// a TLSRoute, a TCPRoute and a UDPRoute attached to Gateway ns/gateway, a
// TrafficPolicy on the HTTPRoute and a BackendTLSPolicy on the Service a
// second HTTPRoute forwards to, and waits until the controller wrote the
// status of each.
func createRoutesAndPolicy(t *testing.T, kc kubernetes.Interface, agc gwclient.Interface, dc dynamic.Interface, ns, gateway string) {
	t.Helper()
	ctx := context.Background()
	parents := gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gateway)}}}
	route := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	gw := agc.GatewayV1()
	if _, err := gw.HTTPRoutes(ns).Create(ctx, &gatewayv1.HTTPRoute{
		ObjectMeta: route("web-http"), Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: parents},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HTTPRoute: %v", err)
	}
	if _, err := gw.GRPCRoutes(ns).Create(ctx, &gatewayv1.GRPCRoute{
		ObjectMeta: route("web-grpc"), Spec: gatewayv1.GRPCRouteSpec{CommonRouteSpec: parents},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create GRPCRoute: %v", err)
	}
	port := gatewayv1.PortNumber(443)
	if _, err := gw.TLSRoutes(ns).Create(ctx, &gatewayv1.TLSRoute{
		ObjectMeta: route("web-tls"),
		Spec: gatewayv1.TLSRouteSpec{CommonRouteSpec: parents, Hostnames: []gatewayv1.Hostname{"tls.example.com"},
			Rules: []gatewayv1.TLSRouteRule{{BackendRefs: []gatewayv1.BackendRef{{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web-backend", Port: &port}}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create TLSRoute: %v", err)
	}
	// No TCP or UDP listener: the controller still writes their status
	// (NotAllowedByListeners).
	l4Rules := []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web-backend", Port: &port}}}
	if _, err := gw.TCPRoutes(ns).Create(ctx, &gatewayv1.TCPRoute{ObjectMeta: route("web-tcp"),
		Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: parents, Rules: []gatewayv1.TCPRouteRule{{BackendRefs: l4Rules}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create TCPRoute: %v", err)
	}
	if _, err := gw.UDPRoutes(ns).Create(ctx, &gatewayv1.UDPRoute{ObjectMeta: route("web-udp"),
		Spec: gatewayv1.UDPRouteSpec{CommonRouteSpec: parents, Rules: []gatewayv1.UDPRouteRule{{BackendRefs: l4Rules}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create UDPRoute: %v", err)
	}
	// A BackendTLSPolicy for the Service an HTTPRoute forwards to: its
	// status (under the route's Gateway) is the controller's to write.
	if _, err := kc.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: route("web-backend"),
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Service web-backend: %v", err)
	}
	if _, err := gw.HTTPRoutes(ns).Create(ctx, &gatewayv1.HTTPRoute{
		ObjectMeta: route("web-https-backend"), Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: parents,
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web-backend", Port: &port}}}}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HTTPRoute web-https-backend: %v", err)
	}
	if _, err := gw.BackendTLSPolicies(ns).Create(ctx, &gatewayv1.BackendTLSPolicy{ObjectMeta: route("web-backend-tls"),
		Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: "web-backend"}}},
			Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "web-backend.internal",
				CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "web-backend-ca"}}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create BackendTLSPolicy: %v", err)
	}
	policy, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tlbv1alpha1.TrafficPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: tlbv1alpha1.SchemeGroupVersion.String(), Kind: tlbv1alpha1.KindTrafficPolicy},
		ObjectMeta: route("web-cors"),
		Spec: tlbv1alpha1.TrafficPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
				Group: gatewayv1.GroupName, Kind: "HTTPRoute", Name: "web-http"}}},
			CORS: &api.CORS{AllowOrigins: []string{"https://app.example.com"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(gatewayctl.TrafficPolicyResource).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: policy}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create TrafficPolicy: %v", err)
	}

	ours := func(what string, parents []gatewayv1.RouteParentStatus) (bool, string) {
		for _, p := range parents {
			if p.ControllerName == gatewayapi.ControllerName && string(p.ParentRef.Name) == gateway {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%s status.parents %+v", what, parents)
	}
	eventually(t, 30*time.Second, "the controller wrote the status of HTTPRoute web-http", func() (bool, string) {
		r, err := gw.HTTPRoutes(ns).Get(ctx, "web-http", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return ours("HTTPRoute", r.Status.Parents)
	})
	eventually(t, 30*time.Second, "the controller wrote the status of GRPCRoute web-grpc", func() (bool, string) {
		r, err := gw.GRPCRoutes(ns).Get(ctx, "web-grpc", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return ours("GRPCRoute", r.Status.Parents)
	})
	eventually(t, 30*time.Second, "the controller wrote the status of TLSRoute web-tls", func() (bool, string) {
		r, err := gw.TLSRoutes(ns).Get(ctx, "web-tls", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return ours("TLSRoute", r.Status.Parents)
	})
	eventually(t, 30*time.Second, "the controller wrote the status of TCPRoute web-tcp and UDPRoute web-udp", func() (bool, string) {
		r, err := gw.TCPRoutes(ns).Get(ctx, "web-tcp", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if ok, msg := ours("TCPRoute", r.Status.Parents); !ok {
			return false, msg
		}
		u, err := gw.UDPRoutes(ns).Get(ctx, "web-udp", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return ours("UDPRoute", u.Status.Parents)
	})
	eventually(t, 30*time.Second, "the controller wrote the status of BackendTLSPolicy web-backend-tls", func() (bool, string) {
		p, err := gw.BackendTLSPolicies(ns).Get(ctx, "web-backend-tls", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, a := range p.Status.Ancestors {
			if a.ControllerName == gatewayapi.ControllerName && string(a.AncestorRef.Name) == gateway {
				return true, ""
			}
		}
		return false, fmt.Sprintf("status %+v", p.Status)
	})
	eventually(t, 30*time.Second, "the controller wrote the status of TrafficPolicy web-cors", func() (bool, string) {
		u, err := dc.Resource(gatewayctl.TrafficPolicyResource).Namespace(ns).Get(ctx, "web-cors", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		var p tlbv1alpha1.TrafficPolicy
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
			return false, err.Error()
		}
		for _, a := range p.Status.Ancestors {
			if a.ControllerName == gatewayapi.ControllerName {
				return true, ""
			}
		}
		return false, fmt.Sprintf("status %+v", p.Status)
	})
}

// repeatConflictEvent makes the controller repeat an Event, which its
// recorder counts by patching the Event: Gateway taken's VIP Service name
// is held by a Service that is not its own, so each sync warns
// VIPServiceNameTaken; syncs are triggered by touching the Namespace
// (which the controller watches) until the Event's count is above one.
func repeatConflictEvent(t *testing.T, kc kubernetes.Interface, agc gwclient.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	if _, err := kc.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: gatewayctl.VIPServiceName("taken")},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := agc.GatewayV1().Gateways(ns).Create(ctx, &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "rbac-gateway", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := agc.GatewayV1().Gateways(ns).Delete(context.Background(), "taken", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete Gateway taken: %v", err)
		}
	})
	touches := 0
	var touched time.Time
	eventually(t, 60*time.Second, "a VIPServiceNameTaken Event on Gateway taken counted more than once", func() (bool, string) {
		evs, err := kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Gateway,involvedObject.name=taken"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == gatewayctl.ReasonVIPServiceConflict && e.Count > 1 {
				return true, ""
			}
		}
		// One more sync, at most every second: the recorder sends the
		// repeat on its own time.
		if time.Since(touched) > time.Second {
			touches++
			touched = time.Now()
			if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				n, err := kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if n.Labels == nil {
					n.Labels = map[string]string{}
				}
				n.Labels["rbac-test-touch"] = fmt.Sprint(touches)
				_, err = kc.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{})
				return err
			}); err != nil {
				return false, fmt.Sprintf("touch Namespace %s: %v", ns, err)
			}
		}
		return false, fmt.Sprintf("%d touches; events %+v", touches, evs.Items)
	})
}

// touchLease changes the labels of the controller's Lease as the admin:
// the controller's next renewal, optimistic (an update from the Lease it
// last saw), conflicts, and leader election falls back to getting the
// Lease; it is how a replica that did not create the Lease uses get. It
// waits until the recorder saw that get succeed.
func touchLease(t *testing.T, kc kubernetes.Interface, rec *requestRecorder) {
	t.Helper()
	ctx := context.Background()
	leases := kc.CoordinationV1().Leases("tlb-system")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(ctx, "tlb-gateway-controller", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Labels == nil {
			l.Labels = map[string]string{}
		}
		l.Labels["rbac-test-touch"] = "1"
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatalf("touch Lease tlb-system/tlb-gateway-controller: %v", err)
	}
	eventually(t, 30*time.Second, "the controller got its Lease after the touch", func() (bool, string) {
		return slices.ContainsFunc(rec.requests(), func(r recordedRequest) bool {
			return r.Group == "coordination.k8s.io" && r.Resource == "leases" && r.Verb == "get" && r.status == 200
		}), "no successful get of a Lease recorded"
	})
}

// attachListenerSet lets Gateway gw of ns take ListenerSets of its
// namespace and waits until the controller wrote Accepted on one.
func attachListenerSet(t *testing.T, agc gwclient.Interface, ns, gw string) {
	t.Helper()
	ctx := context.Background()
	same := gatewayv1.NamespacesFromSame
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		g, err := agc.GatewayV1().Gateways(ns).Get(ctx, gw, metav1.GetOptions{})
		if err != nil {
			return err
		}
		g.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: &same}}
		_, err = agc.GatewayV1().Gateways(ns).Update(ctx, g, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	host := gatewayv1.Hostname("set.example.com")
	if _, err := agc.GatewayV1().ListenerSets(ns).Create(ctx, &gatewayv1.ListenerSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "extra"},
		Spec: gatewayv1.ListenerSetSpec{ParentRef: gatewayv1.ParentGatewayReference{Name: gatewayv1.ObjectName(gw)},
			Listeners: []gatewayv1.ListenerEntry{{Name: "set-http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: &host}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "ListenerSet extra Accepted by the controller", func() (bool, string) {
		ls, err := agc.GatewayV1().ListenerSets(ns).Get(ctx, "extra", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range ls.Status.Conditions {
			if c.Type == string(gatewayv1.ListenerSetConditionAccepted) && c.Status == metav1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("status %+v", ls.Status)
	})
}
