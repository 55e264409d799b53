//go:build k8s

package k8s

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/internal/console"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
	"github.com/tlbproject/tlb/internal/poll"
)

// TestRBACConsole: the console's ClusterRole and Role
// (deploy/console/rbac.yaml) let ServiceAccount tlb-console list and watch
// everything the page reads (pools, clusters, Services, Events, Gateways,
// the Leases of tlb-system) and render the page from the real API server,
// a Service's VIP with its pool and the Lease holder on it; list (and
// watch) the Pods of tlb-system, which is how it finds a director at its
// node's IP and named obs port; and grant no Secret (not even list), no
// write of any kind, no get of a Pod nor Pods of another namespace, no
// Nodes or EndpointSlices, and no Lease outside tlb-system.
func TestRBACConsole(t *testing.T) {
	installRBAC(t, "deploy/console/rbac.yaml")
	ctx := context.Background()
	kc, dc := clients(t)
	ns := "rbac-console"
	ensureNamespace(t, kc, ns)
	createPool(t, dc, "rbac-console", "rbacconsole", 0, "rbac-console-pool", "198.51.100.96/28")
	t.Cleanup(func() {
		_ = dc.Resource(v1alpha1.VIPPoolResource).Delete(context.Background(), "rbac-console-pool", metav1.DeleteOptions{})
		_ = dc.Resource(v1alpha1.L4ClusterResource).Delete(context.Background(), "rbac-console", metav1.DeleteOptions{})
	})
	const keyMaterial = "RBAC-CONSOLE-KEY-MATERIAL-NEVER-SHOWN"
	svc := lbService(ns, "web", map[string]string{api.AnnotationEnvironment: "rbacconsole", api.AnnotationAssignedPool: "rbac-console-pool",
		api.AnnotationAssignedL4Cluster: "rbac-console", api.AnnotationL7: "true", "tlb.io/l7-tls-secret": "web-tls"})
	created, err := kc.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.51.100.97"}}
	if _, err := kc.CoreV1().Services(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls"}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"tls.key": []byte(keyMaterial)}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.rbac-console"}, Type: corev1.EventTypeWarning,
		Reason: "RBACConsoleTest", Message: "a warning the console shows", InvolvedObject: corev1.ObjectReference{Kind: "Service", Namespace: ns, Name: "web"},
		Count: 1, LastTimestamp: metav1.Now()}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	holder := "rbac-console-holder"
	if _, err := kc.CoordinationV1().Leases("tlb-system").Create(ctx, leaseFor("rbac-console", holder), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.CoordinationV1().Leases("tlb-system").Delete(context.Background(), "rbac-console", metav1.DeleteOptions{})
		_ = kc.CoreV1().Services(ns).Delete(context.Background(), "web", metav1.DeleteOptions{})
		_ = kc.CoreV1().Secrets(ns).Delete(context.Background(), "web-tls", metav1.DeleteOptions{})
	})

	dirPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "tlb-director-rbac-console", Labels: map[string]string{console.LabelName: console.PodNameDirector}},
		// The API server has no controller making "default" ServiceAccounts.
		Spec: corev1.PodSpec{ServiceAccountName: "tlb-console", AutomountServiceAccountToken: new(false), HostNetwork: true, Containers: []corev1.Container{{Name: "director", Image: "example.invalid/tlb",
			Ports: []corev1.ContainerPort{{Name: console.MetricsPortName, ContainerPort: 9100, HostPort: 9100}}}}}}
	dirPod, err = kc.CoreV1().Pods("tlb-system").Create(ctx, dirPod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.CoreV1().Pods("tlb-system").Delete(context.Background(), "tlb-director-rbac-console", metav1.DeleteOptions{})
	})
	dirPod.Status.HostIP = "198.18.1.77"
	dirPod.Status.HostIPs = []corev1.HostIP{{IP: "198.18.1.77"}}
	if _, err := kc.CoreV1().Pods("tlb-system").UpdateStatus(ctx, dirPod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	c := serviceAccountClients(t, "tlb-console")
	// Discovery needs list on the Pods of tlb-system (refused, it fails);
	// the Role may reach the API server's RBAC cache after the ClusterRole.
	want := console.Endpoint{Role: console.RoleDirector, Name: dirPod.Name, URL: "http://198.18.1.77:9100"}
	poll.Explained(t, 30*time.Second, "tlb-console discovers the director Pod at its host IP and metrics port", func() (bool, string) {
		eps, err := console.PodDiscovery{Kube: c.Kube, Namespace: "tlb-system"}.Endpoints(ctx)
		if err != nil {
			return false, err.Error()
		}
		return slices.Contains(eps, want), fmt.Sprintf("discovered %+v, want %+v among them", eps, want)
	})
	src := console.KubeSource{Kube: c.Kube, Dynamic: c.Dynamic, LeaseNamespace: "tlb-system"}
	st, err := src.ReadAPI(ctx)
	if err != nil {
		t.Fatalf("tlb-console reads the API server: %v", err)
	}
	// deploy/crds/gateway-api holds the Gateway API CRDs (TestMain
	// installs them here): the console, allowed to list Gateways, reports them
	// installed. (Without the CRD the API server answers 404, which the
	// console shows as "not installed"; internal/console tests both.)
	if !st.GatewaysInstalled {
		t.Error("Gateways reported not installed although TestMain installs the Gateway API CRDs of deploy/crds/gateway-api")
	}

	// Watch, as an informer would, each kind the page reads.
	for name, watch := range map[string]func(context.Context) (interface{ Stop() }, error){
		"services": func(ctx context.Context) (interface{ Stop() }, error) {
			return c.Kube.CoreV1().Services("").Watch(ctx, metav1.ListOptions{})
		},
		"events": func(ctx context.Context) (interface{ Stop() }, error) {
			return c.Kube.CoreV1().Events("").Watch(ctx, metav1.ListOptions{})
		},
		"vippools": func(ctx context.Context) (interface{ Stop() }, error) {
			return c.Dynamic.Resource(v1alpha1.VIPPoolResource).Watch(ctx, metav1.ListOptions{})
		},
		"l4clusters": func(ctx context.Context) (interface{ Stop() }, error) {
			return c.Dynamic.Resource(v1alpha1.L4ClusterResource).Watch(ctx, metav1.ListOptions{})
		},
		"leases in tlb-system": func(ctx context.Context) (interface{ Stop() }, error) {
			return c.Kube.CoordinationV1().Leases("tlb-system").Watch(ctx, metav1.ListOptions{})
		},
		"pods in tlb-system": func(ctx context.Context) (interface{ Stop() }, error) {
			return c.Kube.CoreV1().Pods("tlb-system").Watch(ctx, metav1.ListOptions{})
		},
	} {
		w, err := watch(ctx)
		if err != nil {
			t.Errorf("tlb-console: watch %s: %v", name, err)
			continue
		}
		w.Stop()
	}

	// The page itself, from the real API server as tlb-console.
	h, err := console.NewHandler(&console.Collector{API: src, Timeout: 30 * time.Second, Now: time.Now}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	page := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /: %d\n%s", rec.Code, page)
	}
	for _, want := range []string{"rbac-console-pool", "198.51.100.96/28", `href="/vip/198.51.100.97"`, "rbac-console/web", holder, "RBACConsoleTest"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, `class="banner"`) {
		t.Errorf("page carries a banner with the API server up")
	}
	if strings.Contains(page, keyMaterial) {
		t.Error("the page shows a Secret's data")
	}

	assertForbidden(t, "tlb-console", c, append(readOnlyServiceChecks(kc, ns, "web"),
		forbidden{"list Secrets", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"get a Secret", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, "web-tls", metav1.GetOptions{})
			return err
		}},
		forbidden{"watch Secrets", func(ctx context.Context, c sharedkube.Clients) error {
			w, err := c.Kube.CoreV1().Secrets(ns).Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		}},
		forbidden{"list Pods of every namespace", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"list Pods of another namespace", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"get a Pod", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Pods("tlb-system").Get(ctx, "tlb-director-rbac-console", metav1.GetOptions{})
			return err
		}},
		forbidden{"delete a Pod", func(ctx context.Context, c sharedkube.Clients) error {
			return c.Kube.CoreV1().Pods("tlb-system").Delete(ctx, "tlb-director-rbac-console", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		forbidden{"list Nodes", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"list EndpointSlices", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"list Leases of another namespace", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
			return err
		}},
		forbidden{"update a Lease", func(ctx context.Context, c sharedkube.Clients) error {
			l, err := kc.CoordinationV1().Leases("tlb-system").Get(ctx, "rbac-console", metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = c.Kube.CoordinationV1().Leases("tlb-system").Update(ctx, l, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		forbidden{"create an Event", func(ctx context.Context, c sharedkube.Clients) error {
			_, err := c.Kube.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x"},
				InvolvedObject: corev1.ObjectReference{Kind: "Service", Namespace: ns, Name: "web"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
		forbidden{"delete an Event", func(ctx context.Context, c sharedkube.Clients) error {
			return c.Kube.CoreV1().Events(ns).Delete(ctx, "web.rbac-console", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		forbidden{"delete a VIPPool", func(ctx context.Context, c sharedkube.Clients) error {
			return c.Dynamic.Resource(v1alpha1.VIPPoolResource).Delete(ctx, "rbac-console-pool", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		forbidden{"update a VIPPool's status", func(ctx context.Context, c sharedkube.Clients) error {
			u, err := dc.Resource(v1alpha1.VIPPoolResource).Get(ctx, "rbac-console-pool", metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = c.Dynamic.Resource(v1alpha1.VIPPoolResource).UpdateStatus(ctx, u, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
	))
}

// leaseFor is a Lease held by holder, renewed now.
func leaseFor(name, holder string) *coordinationv1.Lease {
	now := metav1.NewMicroTime(time.Now())
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &now}}
}
