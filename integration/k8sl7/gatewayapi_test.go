//go:build k8s

package k8sl7

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	l7kube "github.com/tlbproject/tlb/l7/kube"
	"github.com/tlbproject/tlb/l7/model"
)

// gatewayAPICRDs returns a directory with the standard-channel CRDs of
// the pinned Gateway API module that l7 serve reads (the module's folder
// also holds a ValidatingAdmissionPolicy, not a CRD).
func gatewayAPICRDs(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("find the gateway-api module: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	dir := t.TempDir()
	for _, kind := range []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "referencegrants"} {
		name := "gateway.networking.k8s.io_" + kind + ".yaml"
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// routesBuild stands in for gatewayapi.Build: a gateway of group edge per
// Gateway that has a VIP, a service per HTTPRoute; it counts its calls.
type routesBuild struct {
	mu    sync.Mutex
	calls int
}

func (b *routesBuild) build(in gatewayapi.Inputs) gatewayapi.Result {
	b.mu.Lock()
	b.calls++
	b.mu.Unlock()
	var cfg model.Config
	for _, gw := range in.Gateways {
		if vips := in.Addresses[types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}]; len(vips) > 0 {
			cfg.Gateways = append(cfg.Gateways, model.Gateway{Name: gw.Namespace + "." + gw.Name, Group: "edge",
				Listeners: []model.Listener{{Name: "http", VIP: vips[0], Port: 80, Protocol: model.HTTP}}})
		}
	}
	for _, r := range in.HTTPRoutes {
		cfg.Services = append(cfg.Services, model.Service{Name: "route." + r.Namespace + "." + r.Name, Group: "edge"})
	}
	return gatewayapi.Result{Config: cfg}
}

// TestSourceReadsGatewayAPIFromAPIServer: l7 serve's source, started
// against a real API server without the Gateway API CRDs, serves
// annotated Services only and says so; once the CRDs are installed (and
// no tlb.io Gateway API CRDs, which the source then leaves unwatched) it
// watches Gateways and HTTPRoutes without a restart, reads a Gateway's
// VIP from its VIP Service, and publishes Build's model when a route is
// created.
func TestSourceReadsGatewayAPIFromAPIServer(t *testing.T) {
	ctx := ctxFor(t, 2*time.Minute)
	kc := kubernetes.NewForConfigOrDie(server.Config)
	gc := gwclient.NewForConfigOrDie(server.Config)
	dc := dynamic.NewForConfigOrDie(server.Config)
	if _, err := kc.Discovery().ServerResourcesForGroupVersion(gatewayv1.GroupVersion.String()); !apierrors.IsNotFound(err) {
		t.Fatalf("the Gateway API CRDs are served before this test installs them (discovery: %v)", err)
	}
	log, logs := captureLog(t)
	b := &routesBuild{}
	const gns = "gwapi"
	src, err := l7kube.NewSource(kc, log, l7kube.Options{Group: "edge", Namespaces: []string{gns}, Now: time.Now,
		GatewayAPI: &l7kube.GatewayAPI{Client: gc, Dynamic: dc, Build: b.build, Rediscover: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // runs after the source has stopped
		if t.Failed() {
			t.Logf("source log:\n%s", logs)
		}
	})
	rec := &recorder{}
	runSource(ctx, t, src, func(_ context.Context, cfg model.Config) []model.Problem { rec.add(cfg); return nil })
	eventually(t, 30*time.Second, "a first model without the Gateway API, and the log saying why", func() (bool, string) {
		_, n := rec.last()
		return n > 0 && strings.Contains(logs.String(), "Gateway API CRDs not installed"), fmt.Sprintf("%d publishes", n)
	})

	if err := apiserver.InstallCRDs(ctx, server.Config, gatewayAPICRDs(t)); err != nil {
		t.Fatal(err)
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gns}}, metav1.CreateOptions{}))
	must(gc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "tlb"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName}}, metav1.CreateOptions{}))
	gw, err := gc.GatewayV1().Gateways(gns).Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "tlb", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	vip, err := kc.CoreV1().Services(gns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "gateway-web", Labels: map[string]string{api.LabelOwningGateway: gns + ".web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway", Name: gw.Name, UID: gw.UID, Controller: &yes}}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vip.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.77"}}
	must(kc.CoreV1().Services(gns).UpdateStatus(ctx, vip, metav1.UpdateOptions{}))

	eventually(t, 30*time.Second, "the Gateway with its VIP in the model", func() (bool, string) {
		cfg, n := rec.last()
		ok := n > 0 && len(cfg.Gateways) == 1 && cfg.Gateways[0].Name == gns+".web" &&
			cfg.Gateways[0].Listeners[0].VIP == netip.MustParseAddr("203.0.113.77")
		return ok, fmt.Sprintf("%d publishes, gateways %+v", n, cfg.Gateways)
	})
	must(gc.GatewayV1().HTTPRoutes(gns).Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "web"}}}}},
		metav1.CreateOptions{}))
	eventually(t, 30*time.Second, "the HTTPRoute's service in the model", func() (bool, string) {
		cfg, _ := rec.last()
		var names []string
		for _, s := range cfg.Services {
			names = append(names, s.Name)
		}
		return slices.Contains(names, "route."+gns+".shop"), fmt.Sprintf("services %v", names)
	})
	if !strings.Contains(logs.String(), "reading Gateway API objects") {
		t.Errorf("the source did not say it reads Gateway API objects")
	}
}
