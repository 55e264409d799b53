//go:build k8s

package k8sgateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/api"
	tlbv1alpha1 "github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/internal/poll"
	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/gatewayctl"
)

// fleetPort is the HTTP listener port of the fleet test's Gateways (on
// their loopback VIPs, 127.77.0.0/29, no other test's).
const fleetPort = 18080

// TestDedicatedFleet: with the real API server, the IPAM and Gateway
// controllers, and two real Envoys, each driven by its own l7 serve as
// deploy/envoy runs them (the class's group "fleet", and the group
// "fleet.fleet.own" an operator runs for Gateway fleet/own): a Gateway
// annotated tlb.io/fleet=dedicated is served by its own Envoy alone (its
// host answered there, no listener of it on the shared Envoy), and the
// shared Gateway by the shared Envoy alone; its VIP Service names the
// fleet's group. Dropping the annotation moves it back to the shared
// Envoy (and the annotation off the VIP Service); deleting it removes its
// listener.
func TestDedicatedFleet(t *testing.T) {
	envoyBin, err := envoyproc.Binary()
	if err != nil {
		t.Fatalf("the real Envoy is needed (tools/deps.sh): %v", err)
	}
	t.Logf("envoy %s", envoyBin)
	ctx := context.Background()
	c := clients(t)
	const ns, group = "fleet", "fleet"
	ownGroup := gatewayapi.FleetGroup(group, ns, "own")
	ensureNamespace(t, c.kube, ns)
	createL4(t, c.dyn, "fleet-l4", "fleetenv", group, map[string]string{"fleet-pool": "127.77.0.0/29"})
	createClass(t, c, "fleet", tlbv1alpha1.GatewayClassConfigSpec{Environment: "fleetenv", Pool: "fleet-pool", GatewayGroup: group})
	startControllers(t, c, prometheus.NewRegistry())

	gws := c.gw.GatewayV1().Gateways(ns)
	for _, name := range []string{"shared", "own"} {
		gw := gateway(ns, name, "fleet")
		gw.Spec.Listeners[0].Port = fleetPort
		if name == "own" {
			gw.Annotations = map[string]string{api.AnnotationFleet: api.FleetDedicated}
		}
		if _, err := gws.Create(ctx, gw, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.gw.GatewayV1().HTTPRoutes(ns).Create(ctx, redirectRoute(ns, name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sharedVIP, ownVIP := gatewayAddress(t, c, ns, "shared"), gatewayAddress(t, c, ns, "own")
	waitFleetGroup(t, c, ns, "own", ownGroup)

	// One gateway node (host address 127.77.1.1) runs both fleets, the
	// dedicated one with the node ports docs/gateway-api.md gives it.
	shared := startFleet(t, group, ns, 9902, 9480)
	own := startFleet(t, ownGroup, ns, 9912, 9490)
	if code, body := get(t, "http://"+fleetNode+":9912/ready"); code != http.StatusOK {
		t.Fatalf("the dedicated fleet's stats listener %s:9912/ready: %d %s", fleetNode, code, body)
	}

	// Each Gateway on its own fleet only.
	waitServed(t, own, ownVIP, "own")
	waitServed(t, shared, sharedVIP, "shared")
	assertNoListener(t, shared, ownVIP)
	assertNoListener(t, own, sharedVIP)

	// Back to the shared fleet: the annotation goes from the VIP
	// Service, the listener from the dedicated Envoy to the shared one.
	gw, err := gws.Get(ctx, "own", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(gw.Annotations, api.AnnotationFleet)
	if _, err := gws.Update(ctx, gw, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFleetGroup(t, c, ns, "own", "")
	waitServed(t, shared, ownVIP, "own")
	waitNoListener(t, own, ownVIP)

	// Deleted: no Envoy serves it any more.
	if err := gws.Delete(ctx, "own", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNoListener(t, shared, ownVIP)
	poll.Explained(t, 60*time.Second, "own's VIP Service deleted", func() (bool, string) {
		_, err := c.kube.CoreV1().Services(ns).Get(ctx, gatewayctl.VIPServiceName("own"), metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// redirectRoute is an HTTPRoute on Gateway ns/name for host
// name.example.com answering every request with a redirect to
// name.redirect.example.com: which Gateway served a request shows without
// a backend.
func redirectRoute(ns, name string) *gatewayv1.HTTPRoute {
	host := gatewayv1.PreciseHostname(name + ".redirect.example.com")
	return &gatewayv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(name)}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(name + ".example.com")},
			Rules: []gatewayv1.HTTPRouteRule{{Filters: []gatewayv1.HTTPRouteFilter{{
				Type:            gatewayv1.HTTPRouteFilterRequestRedirect,
				RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{Hostname: &host},
			}}}},
		},
	}
}

// gatewayAddress waits for Gateway ns/name's address and returns it.
func gatewayAddress(t *testing.T, c testClients, ns, name string) string {
	t.Helper()
	var addr string
	poll.Explained(t, 60*time.Second, fmt.Sprintf("Gateway %s/%s has an address", ns, name), func() (bool, string) {
		gw, err := c.gw.GatewayV1().Gateways(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if len(gw.Status.Addresses) != 1 {
			return false, fmt.Sprintf("status %+v", gw.Status)
		}
		addr = gw.Status.Addresses[0].Value
		return true, ""
	})
	return addr
}

// waitFleetGroup waits until the VIP Service of Gateway ns/name has
// api.AnnotationFleetGroup want ("" for none).
func waitFleetGroup(t *testing.T, c testClients, ns, name, want string) {
	t.Helper()
	poll.Explained(t, 60*time.Second, fmt.Sprintf("VIP Service of %s/%s: %s %q", ns, name, api.AnnotationFleetGroup, want), func() (bool, string) {
		svc, err := c.kube.CoreV1().Services(ns).Get(context.Background(), gatewayctl.VIPServiceName(name), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got, ok := svc.Annotations[api.AnnotationFleetGroup]
		return got == want && ok == (want != ""), fmt.Sprintf("annotations %v", svc.Annotations)
	})
}

// fleetNode stands for the gateway node's address ($(HOST_IP)) both
// fleets of the test run on.
const fleetNode = "127.77.1.1"

// startFleet runs l7 serve of group (reading the API server, namespace
// ns) and its Envoy, as deploy/envoy/gateway.yaml does for that group,
// with Envoy's stats listener on fleetNode:statsPort and l7's obs
// listener on fleetNode:metricsPort: the shipped manifest with the
// group's --group and, for a second fleet on the node, the ports
// docs/gateway-api.md ("A fleet of its own") says to change.
func startFleet(t *testing.T, group, ns string, statsPort, metricsPort int) *envoyproc.Gateway {
	t.Helper()
	dir, err := os.MkdirTemp("", "fleet")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	manifest, err := envoyproc.ManifestForGroup(dir, group)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	const stats = "--stats-address=$(HOST_IP):9902"
	if !bytes.Contains(b, []byte(stats)) {
		t.Fatalf("deploy/envoy/gateway.yaml has no %s", stats)
	}
	b = bytes.ReplaceAll(b, []byte(stats), fmt.Appendf(nil, "--stats-address=$(HOST_IP):%d", statsPort))
	if err := os.WriteFile(manifest, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return envoyproc.StartT(t, envoyproc.Options{Group: group, Dir: dir + "/gw", HostIP: fleetNode, Manifest: manifest,
		Serve: []string{"--config=" + t.TempDir(), "--kubeconfig=" + server.Kubeconfig, "--namespaces=" + ns, "--debounce=50ms",
			// After envoyproc's own --metrics-addr: the last one counts.
			fmt.Sprintf("--metrics-addr=%s:%d", fleetNode, metricsPort)}})
}

// get GETs url and returns the status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test's one request to a local listener
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// waitServed waits until g answers name.example.com on vip with the
// redirect of Gateway name's route.
func waitServed(t *testing.T, g *envoyproc.Gateway, vip, name string) {
	t.Helper()
	cl := envoyproc.ClientTo(net.JoinHostPort(vip, fmt.Sprint(fleetPort)), nil, false)
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	want := fmt.Sprintf("http://%s.redirect.example.com:%d/", name, fleetPort)
	poll.Explained(t, 90*time.Second, fmt.Sprintf("%s.example.com answered on %s by the Envoy of its fleet", name, vip), func() (bool, string) {
		resp, err := cl.Get("http://" + name + ".example.com/")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		ok := resp.StatusCode == http.StatusFound && resp.Header.Get("Location") == want
		if !ok {
			return false, fmt.Sprintf("%d Location %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		// It was this Envoy: the listener of the VIP is its own.
		ls, err := g.Listeners(context.Background())
		return err == nil && hasListenerOn(ls, vip), fmt.Sprintf("listeners %v (%v)", ls, err)
	})
}

// hasListenerOn reports whether a listener on vip is in ls (listeners
// are named "<protocol>-<vip>-<port>", model.ListenerName).
func hasListenerOn(ls []string, vip string) bool {
	return slices.ContainsFunc(ls, func(l string) bool { return strings.Contains(l, "-"+vip+"-") })
}

// assertNoListener fails the test when g has a listener on vip.
func assertNoListener(t *testing.T, g *envoyproc.Gateway, vip string) {
	t.Helper()
	ls, err := g.Listeners(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if hasListenerOn(ls, vip) {
		t.Fatalf("the Envoy with stats on %s has a listener on %s: %v", g.StatsAddr, vip, ls)
	}
}

// waitNoListener waits until g has no listener on vip.
func waitNoListener(t *testing.T, g *envoyproc.Gateway, vip string) {
	t.Helper()
	poll.Explained(t, 60*time.Second, "no listener on "+vip+" in the Envoy with stats on "+g.StatsAddr, func() (bool, string) {
		ls, err := g.Listeners(context.Background())
		return err == nil && !hasListenerOn(ls, vip), fmt.Sprintf("listeners %v (%v)", ls, err)
	})
}
