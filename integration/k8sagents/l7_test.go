//go:build k8s

package k8sagents

import (
	"context"
	"fmt"
	"net/netip"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/tlb/model"
)

// TestL7BackendsFollowEndpointSlices: against the real API server, the
// director source gives an L7 Service's VIP the count of its ready
// EndpointSlice endpoints (Ready unset or true), and follows them: an
// endpoint turning unready, a new slice, a deleted slice. A plain Service
// on another VIP has no L7 state.
func TestL7BackendsFollowEndpointSlices(t *testing.T) {
	kc, dc := clientsFor(t, server.Config)
	ctx := context.Background()
	createCluster(t, dc, "ka-l7", "ka-l7", "ka-l7", map[string][]string{"ka-l7-a": {"198.51.100.192/26"}})
	createNode(t, kc, "ka-gw-l7", "198.18.5.2", true, map[string]string{api.LabelGateway: "true", api.LabelGatewayGroup: "ka-l7"})
	ensureNamespace(t, kc, "ka-l7")
	web := lbService("ka-l7", "web", "198.51.100.200", svcPort("http", 80, corev1.ProtocolTCP))
	web.Annotations[api.AnnotationL7] = "true"
	createWithStatus(t, kc, web, "ka-l7", "198.51.100.200")
	createWithStatus(t, kc, lbService("ka-l7", "plain", "198.51.100.201", svcPort("http", 80, corev1.ProtocolTCP)), "ka-l7", "198.51.100.201")
	slices := kc.DiscoveryV1().EndpointSlices("ka-l7")
	slice := func(name string, ready ...*bool) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
			AddressType: discoveryv1.AddressTypeIPv4}
		for i, r := range ready {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.%d.%d", len(name), i+1)},
				Conditions: discoveryv1.EndpointConditions{Ready: r}})
		}
		return s
	}
	yes, no := new(true), new(false)
	if _, err := slices.Create(ctx, slice("web-1", yes, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	director := runDirector(t, kc, dc, "ka-l7")
	vip := netip.MustParseAddr("198.51.100.200")
	expect := func(ready int, what string) {
		t.Helper()
		want := []model.L7Service{{VIP: vip, Name: "ka-l7/web", ReadyBackends: ready}}
		start := time.Now()
		eventually(t, 30*time.Second, what, func() (bool, string) {
			d, ok := director.last()
			return ok && reflect.DeepEqual(d.L7, want) && len(d.Services) == 2, fmt.Sprintf("L7 %+v, %d services; want %+v", d.L7, len(d.Services), want)
		})
		t.Logf("%s: %d ready backends in the model, seen %v after the API call returned", what, ready, time.Since(start).Round(time.Millisecond))
	}
	expect(2, "two endpoints, Ready true and unset")

	if _, err := slices.Update(ctx, slice("web-1", no, no), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(0, "both endpoints not ready")
	if _, err := slices.Create(ctx, slice("web-22", yes), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(1, "a second slice with a ready endpoint")
	if err := slices.Delete(ctx, "web-22", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(0, "that slice deleted")
}
