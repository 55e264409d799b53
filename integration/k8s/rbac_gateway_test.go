//go:build k8s

package k8s

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/internal/leader"
	"github.com/tlbproject/tlb/ipam"
	tlbv1alpha1 "github.com/tlbproject/tlb/l7/api/v1alpha1"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/gatewayctl"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
)

// TestRBACGatewayController: the Gateway controller's ClusterRole and
// leader Role (deploy/gateway/rbac.yaml) are enough for the real
// controller, elected through Lease tlb-system/tlb-gateway-controller as
// ServiceAccount tlb-gateway-controller, to sync every informer (list and
// watch of each kind it reads; without one it never starts), create a
// Gateway's VIP Service, update it when the listeners change, write the
// Gateway's status.addresses and conditions once the IPAM gave the VIP,
// record an Event on the Gateway and delete the VIP Service when the
// Gateway goes; and it grants no get of a Secret, no write to a Gateway's
// spec or a Service's status, no Pod and no other Lease.
func TestRBACGatewayController(t *testing.T) {
	installRBAC(t, "deploy/gateway/rbac.yaml")
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
	sk, sd, sg := kubernetes.NewForConfigOrDie(cfg), dynamic.NewForConfigOrDie(cfg), gwclient.NewForConfigOrDie(cfg)
	eventually(t, 30*time.Second, "tlb-gateway-controller may list Gateways (RBAC in effect)", func() (bool, string) {
		_, err := sg.GatewayV1().Gateways("").List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, fmt.Sprint(err)
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

	gws := agc.GatewayV1().Gateways(ns)
	gw := &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "rbac-gateway", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
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
	// A new listener port: the VIP Service is updated.
	g, err := gws.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.Spec.Listeners = append(g.Spec.Listeners, gatewayv1.Listener{Name: "alt", Port: 8080, Protocol: gatewayv1.HTTPProtocolType})
	if _, err := gws.Update(ctx, g, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, vipName+" has ports 80 and 8080", func() (bool, string) {
		s, err := kc.CoreV1().Services(ns).Get(ctx, vipName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(s.Spec.Ports) == 2 && s.Spec.Ports[1].Port == 8080 && s.Labels[ipam.LabelOwningGateway] == ns+".web",
			fmt.Sprintf("ports %+v", s.Spec.Ports)
	})

	assertForbidden(t, "tlb-gateway-controller", tlbkube.Clients{Kube: sk, Dynamic: sd}, []forbidden{
		{"get a Secret", func(ctx context.Context, c tlbkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "any", metav1.GetOptions{})
			return err
		}},
		{"update services/status", func(ctx context.Context, c tlbkube.Clients) error {
			s, err := kc.CoreV1().Services(ns).Get(ctx, vipName, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("admin get: %w", err)
			}
			_, err = c.Kube.CoreV1().Services(ns).UpdateStatus(ctx, s, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		{"list Pods", func(ctx context.Context, c tlbkube.Clients) error {
			_, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"get another Lease", func(ctx context.Context, c tlbkube.Clients) error {
			_, err := c.Kube.CoordinationV1().Leases("tlb-system").Get(ctx, "tlb-ipam", metav1.GetOptions{})
			return err
		}},
		{"create a Lease in another namespace", func(ctx context.Context, c tlbkube.Clients) error {
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
			_, err = sg.GatewayV1().Gateways(ns).Update(ctx, g, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		},
		"delete a Gateway": func() error {
			return sg.GatewayV1().Gateways(ns).Delete(ctx, "web", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		},
		"get a Gateway by name": func() error {
			_, err := sg.GatewayV1().Gateways(ns).Get(ctx, "web", metav1.GetOptions{})
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
}
