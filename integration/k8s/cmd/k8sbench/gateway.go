package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// gatewayBench is the Gateway API part: routes HTTPRoutes spread over
// gateways Gateways of one class, created at once; the time until every
// Route is Accepted by its Gateway and every Gateway is Programmed (it has
// its VIP from the running ipam controller).
type gatewayBench struct {
	l7Bin            string
	gateways, routes int
}

// gatewayReference is the goal the issue sets for 500 routes on 50
// Gateways.
const gatewayReference = 15 * time.Second

// run creates the Gateway API objects at once against a running
// gateway controller and returns the BENCH line of the time until all
// converged.
func (b gatewayBench) run(ctx context.Context, srv *apiserver.Server, cfg *rest.Config, kc kubernetes.Interface, dc dynamic.Interface) (string, error) {
	gc, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	ns := "bench-gw"
	if err := createGatewayPrerequisites(ctx, kc, dc, gc, ns); err != nil {
		return "", err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return "", err
	}
	ctrl, err := startChild("gateway controller", b.l7Bin,
		[]string{"gateway-controller", "--kubeconfig=" + srv.Kubeconfig, "--leader-elect=false", "--metrics-addr=" + metricsAddr},
		filepath.Join(srv.Dir, "gateway-controller.log"), "http://"+metricsAddr+"/readyz")
	if err != nil {
		return "", err
	}
	defer ctrl.stop()

	start := time.Now()
	if err := createAtOnce(b.creates(ctx, gc, ns)); err != nil {
		return "", fmt.Errorf("create Gateway API object: %w", err)
	}
	fmt.Printf("%d Gateways and %d HTTPRoutes created in %s\n", b.gateways, b.routes, time.Since(start).Round(time.Millisecond))
	if err := b.waitConverged(ctx, gc, ns, start, ctrl.log.Name()); err != nil {
		return "", err
	}
	done := time.Since(start)
	fmt.Printf("every HTTPRoute Accepted and every Gateway Programmed after %s (goal < %s)\n", done.Round(time.Millisecond), gatewayReference)
	if err := printMetrics("http://"+metricsAddr+"/metrics", "tlb_gateway_"); err != nil {
		return "", err
	}
	if err := printSyncs(ctrl.log.Name()); err != nil {
		return "", err
	}
	if err := printAPIServerCost(ctx, kc); err != nil {
		return "", err
	}
	return fmt.Sprintf("BENCH gateway_api_%d_routes_programmed_s %.2f s", b.routes, done.Seconds()), nil
}

// createGatewayPrerequisites creates what the Gateways and routes refer
// to: namespace ns, the GatewayClass "bench" with its GatewayClassConfig,
// and one backend Service every route names (no endpoints: the routes
// are Accepted all the same; traffic is not what is measured).
func createGatewayPrerequisites(ctx context.Context, kc kubernetes.Interface, dc dynamic.Interface, gc gwclient.Interface, ns string) error {
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	gccGVR := schema.GroupVersionResource{Group: "tlb.io", Version: "v1alpha1", Resource: "gatewayclassconfigs"}
	if _, err := dc.Resource(gccGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "tlb.io/v1alpha1", "kind": "GatewayClassConfig",
		"metadata": map[string]any{"name": "bench"}, "spec": map[string]any{"environment": "bench"},
	}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create GatewayClassConfig: %w", err)
	}
	if _, err := gc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewayapi.ControllerName,
			ParametersRef: &gatewayv1.ParametersReference{Group: "tlb.io", Kind: "GatewayClassConfig", Name: "bench"}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := kc.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "backend"},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "backend"}, Ports: []corev1.ServicePort{{Port: 8080}}},
	}, metav1.CreateOptions{})
	return err
}

// creates is one create call per Gateway and per HTTPRoute, routes spread
// over the Gateways in turn.
func (b gatewayBench) creates(ctx context.Context, gc gwclient.Interface, ns string) []func() error {
	var creates []func() error
	for i := range b.gateways {
		creates = append(creates, func() error {
			_, err := gc.GatewayV1().Gateways(ns).Create(ctx, benchGateway(i), metav1.CreateOptions{})
			return err
		})
	}
	for i := range b.routes {
		creates = append(creates, func() error {
			_, err := gc.GatewayV1().HTTPRoutes(ns).Create(ctx, benchRoute(i, i%b.gateways), metav1.CreateOptions{})
			return err
		})
	}
	return creates
}

// waitConverged polls until every Gateway is Programmed and every
// HTTPRoute Accepted, printing progress every 2 s, and fails after 10
// minutes naming the controller's log.
func (b gatewayBench) waitConverged(ctx context.Context, gc gwclient.Interface, ns string, start time.Time, logName string) error {
	deadline := time.Now().Add(10 * time.Minute)
	lastProgress := time.Now()
	for {
		programmed, accepted, err := b.converged(ctx, gc, ns)
		if err != nil {
			return err
		}
		if time.Since(lastProgress) >= 2*time.Second {
			lastProgress = time.Now()
			fmt.Printf("  after %s: %d of %d Gateways Programmed, %d of %d HTTPRoutes Accepted\n",
				time.Since(start).Round(100*time.Millisecond), programmed, b.gateways, accepted, b.routes)
		}
		if programmed == b.gateways && accepted == b.routes {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after 10 minutes: %d of %d Gateways Programmed, %d of %d HTTPRoutes Accepted (log: %s)",
				programmed, b.gateways, accepted, b.routes, logName)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// converged counts the Gateways that are Programmed and the HTTPRoutes
// Accepted by their parent, each for its current generation.
func (b gatewayBench) converged(ctx context.Context, gc gwclient.Interface, ns string) (programmed, accepted int, _ error) {
	gws, err := gc.GatewayV1().Gateways(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, 0, err
	}
	for _, g := range gws.Items {
		if conditionTrue(g.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed), g.Generation) {
			programmed++
		}
	}
	hrs, err := gc.GatewayV1().HTTPRoutes(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, 0, err
	}
	for _, r := range hrs.Items {
		for _, p := range r.Status.Parents {
			if p.ControllerName == gatewayapi.ControllerName && conditionTrue(p.Conditions, string(gatewayv1.RouteConditionAccepted), r.Generation) {
				accepted++
				break
			}
		}
	}
	return programmed, accepted, nil
}

func conditionTrue(cs []metav1.Condition, typ string, generation int64) bool {
	for _, c := range cs {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation
		}
	}
	return false
}

func benchGateway(i int) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("gw-%02d", i)},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "bench", Listeners: []gatewayv1.Listener{{
			Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		}}},
	}
}

func benchRoute(i, gateway int) *gatewayv1.HTTPRoute {
	prefix := gatewayv1.PathMatchPathPrefix
	path := fmt.Sprintf("/app-%03d", i)
	port := gatewayv1.PortNumber(8080)
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("route-%03d", i)},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(fmt.Sprintf("gw-%02d", gateway))}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(fmt.Sprintf("gw-%02d.bench.example", gateway))},
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &prefix, Value: &path}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "backend", Port: &port}}}},
			}},
		},
	}
}

// printMetrics prints the samples of url whose names start with prefix:
// how many syncs and writes the figure took.
func printMetrics(url, prefix string) error {
	resp, err := http.Get(url) //nolint:noctx // a loopback scrape at the end of the run
	if err != nil {
		return fmt.Errorf("scrape %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("scrape %s: %w", url, err)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, prefix) {
			fmt.Println("  " + line)
		}
	}
	return nil
}

// printSyncs prints the controller's "synced" log lines: what each sync
// wrote and where its time went.
func printSyncs(logPath string) error {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return fmt.Errorf("read the controller's log: %w", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.Contains(line, `"msg":"synced"`) {
			fmt.Println("  " + line)
		}
	}
	return nil
}

// printAPIServerCost prints, from the API server's metrics, the kinds of
// request that took it more than a second in all (the summed latency of
// each, and the part of it spent waiting for etcd): where its time went.
func printAPIServerCost(ctx context.Context, kc kubernetes.Interface) error {
	body, err := kc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("scrape the API server's metrics: %w", err)
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_duration_seconds_sum") && !strings.HasPrefix(line, "etcd_request_duration_seconds_sum") ||
			strings.Contains(line, `verb="WATCH"`) {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil && v >= 1 {
			fmt.Println("  " + line)
		}
	}
	return nil
}
