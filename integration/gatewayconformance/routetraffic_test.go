//go:build conformance

package gatewayconformance

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// routeToTraffic measures, for n HTTPRoutes created one after another on
// the suite's base Gateway gateway-conformance-infra/same-namespace (port
// 80, routes of its namespace), the time from the route's creation to the
// first 200 its hostname gets through Envoy: the controller's status, l7
// serve's watch, translation and xDS push, and Envoy taking the route, as a
// user waits for it. It prints the median and the p99 and deletes the
// routes.
func routeToTraffic(ctx context.Context, t *testing.T, c client.Client, n int) {
	t.Helper()
	const ns, gwName, backend = "gateway-conformance-infra", "same-namespace", "infra-backend-v1"
	var gw gatewayv1.Gateway
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: gwName}, &gw); err != nil {
		t.Errorf("route to traffic: Gateway %s/%s: %v", ns, gwName, err)
		return
	}
	if len(gw.Status.Addresses) == 0 {
		t.Errorf("route to traffic: Gateway %s/%s has no address", ns, gwName)
		return
	}
	addr := net.JoinHostPort(gw.Status.Addresses[0].Value, "80")
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()

	var took []time.Duration
	for i := range n {
		host := fmt.Sprintf("r%d.route-to-traffic.example", i)
		rt := &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("route-to-traffic-%d", i)},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gwName}}},
				Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(host)},
				Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{Name: backend, Port: new(gatewayv1.PortNumber(8080))},
				}}}}},
			},
		}
		// No other route may answer for the host: the 200 must be this
		// route's.
		if ok, _ := get200(ctx, hc, addr, host); ok {
			t.Errorf("route to traffic: host %s answered 200 through %s before HTTPRoute %s existed", host, addr, rt.Name)
			return
		}
		start := time.Now()
		if err := c.Create(ctx, rt); err != nil {
			t.Errorf("route to traffic: create HTTPRoute %s: %v", rt.Name, err)
			return
		}
		defer func() { _ = c.Delete(context.WithoutCancel(ctx), rt) }()
		if err := pollEvery(ctx, 30*time.Second, 10*time.Millisecond, func(ctx context.Context) (bool, error) {
			return get200(ctx, hc, addr, host)
		}); err != nil {
			t.Errorf("route to traffic: HTTPRoute %s (host %s) never answered 200 through %s: %v", rt.Name, host, addr, err)
			return
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	p := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000 }
	fmt.Printf("BENCH gateway_api_route_to_traffic_p50_ms %.0f\nBENCH gateway_api_route_to_traffic_p99_ms %.0f\n", p(0.5), p(0.99))
}

// get200 reports whether http://host/ through addr answers 200.
func get200(ctx context.Context, hc *http.Client, addr, host string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return false, err
	}
	req.Host = host
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("status %d", resp.StatusCode)
	}
	return true, nil
}
