//go:build k8s

package k8sagents

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/ipam/controller"
	netdconfig "github.com/tlbproject/tlb/netd/config"
	netdkube "github.com/tlbproject/tlb/netd/kube"
	netdmodel "github.com/tlbproject/tlb/netd/model"
	tlbconfig "github.com/tlbproject/tlb/tlb/config"
	tlbkube "github.com/tlbproject/tlb/tlb/kube"
	"github.com/tlbproject/tlb/tlb/model"
)

// fileDesired is the director model the file mode builds from testdata/name.
func fileDesired(t *testing.T, name string) model.Desired {
	t.Helper()
	cfg, err := tlbconfig.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Desired.Sorted()
}

// fileGateway is the netd model the file mode builds from testdata/name.
func fileGateway(t *testing.T, name string) netdmodel.Gateway {
	t.Helper()
	cfg, err := netdconfig.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Gateway
}

func runDirector(t *testing.T, kc kubernetes.Interface, dc dynamic.Interface, cluster string) *recorder[model.Desired] {
	t.Helper()
	src, err := tlbkube.NewSource(kc, dc, cluster, testLog())
	if err != nil {
		t.Fatal(err)
	}
	return runSource(t, src.Run)
}

func runNetd(t *testing.T, kc kubernetes.Interface, dc dynamic.Interface, node string, local netdkube.Local) *recorder[netdmodel.Gateway] {
	t.Helper()
	src, err := netdkube.NewSource(kc, dc, node, local, testLog())
	if err != nil {
		t.Fatal(err)
	}
	return runSource(t, src.Run)
}

// reaches waits until the latest model a source emitted equals want.
func reaches[T any](t *testing.T, rec *recorder[T], want T, what string) {
	t.Helper()
	eventually(t, 30*time.Second, what, func() (bool, string) {
		got, ok := rec.last()
		if !ok {
			return false, "nothing emitted"
		}
		return reflect.DeepEqual(got, want), fmt.Sprintf("\n got  %+v\n want %+v", got, want)
	})
}

// startIPAM runs the real ipam controller in-process until the end of
// the test; it allocates the VIPs the Services ask for.
func startIPAM(t *testing.T, kc kubernetes.Interface, dc dynamic.Interface) {
	t.Helper()
	c, err := controller.New(controller.Options{Client: kc, Dynamic: dc, Log: testLog(), Workers: 2, Identity: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ipam controller: %v", err)
		}
	})
}

// TestModelsMatchFileMode sets up pools, L4 clusters, gateway nodes and
// Services in the real API server, lets the real ipam controller
// allocate the VIPs, and checks that the director and netd sources build
// exactly the models the file mode builds from the equivalent YAML in
// testdata/. Then it changes a node's readiness and deletes a Service and
// checks that the models follow.
func TestModelsMatchFileMode(t *testing.T) {
	kc, dc := clientsFor(t, server.Config)
	ctx := context.Background()
	createCluster(t, dc, "ka-east", "ka", "", map[string][]string{"ka-east-a": {"203.0.113.0/25"}, "ka-east-b": {"198.51.100.0/25"}})
	createCluster(t, dc, "ka-west", "ka", "ka-west", map[string][]string{"ka-west-a": {"203.0.113.128/25"}})
	gateway := map[string]string{api.LabelGateway: "true"}
	createNode(t, kc, "ka-gw-1", "198.18.2.2", true, gateway)
	createNode(t, kc, "ka-gw-2", "198.18.2.3", false, gateway)
	createNode(t, kc, "ka-gw-w", "198.18.3.2", true, map[string]string{api.LabelGateway: "true", api.LabelGatewayGroup: "ka-west"})
	createNode(t, kc, "ka-worker", "198.18.9.9", true, nil)

	ensureNamespace(t, kc, "ka")
	startIPAM(t, kc, dc)
	web := lbService("ka", "web", "203.0.113.10", svcPort("http", 80, corev1.ProtocolTCP), svcPort("https", 443, corev1.ProtocolTCP))
	web.Annotations[api.AnnotationL7] = "true" // through the L7 gateways: port map on netd
	for _, s := range []*corev1.Service{
		web,
		lbService("ka", "dns", "198.51.100.7", svcPort("dns-udp", 53, corev1.ProtocolUDP), svcPort("dns-tcp", 53, corev1.ProtocolTCP)),
		lbService("ka", "wapp", "203.0.113.130", svcPort("http", 8080, corev1.ProtocolTCP)),
	} {
		if _, err := kc.CoreV1().Services(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Service %s: %v", s.Name, err)
		}
	}
	// A Service of another class that claims ka-east: never served.
	other := lbService("ka", "other", "203.0.113.11", svcPort("http", 80, corev1.ProtocolTCP))
	class := "example.com/other"
	other.Spec.LoadBalancerClass = &class
	createWithStatus(t, kc, other, "ka-east", "203.0.113.11")

	eventually(t, 30*time.Second, "the ipam controller allocates every VIP", func() (bool, string) {
		list, err := kc.CoreV1().Services("ka").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var missing []string
		for _, s := range list.Items {
			if s.Annotations[api.AnnotationAssignedL4Cluster] == "" || len(s.Status.LoadBalancer.Ingress) == 0 {
				missing = append(missing, s.Name)
			}
		}
		return len(missing) == 0, fmt.Sprintf("no VIP yet: %v", missing)
	})

	east := runDirector(t, kc, dc, "ka-east")
	west := runDirector(t, kc, dc, "ka-west")
	// The gateway listeners' port map, as netd's settings would give it.
	local := netdkube.DefaultLocal()
	local.ListenerPorts = map[uint16]uint16{443: 10443, 80: 10080}
	gw1 := runNetd(t, kc, dc, "ka-gw-1", local)
	gww := runNetd(t, kc, dc, "ka-gw-w", local)
	worker := runNetd(t, kc, dc, "ka-worker", local)

	// The L7 Service's VIP also carries its application's state, which a
	// file states as probes of its backends instead: web has no
	// EndpointSlice here, so no ready backend (l7_test.go follows slices).
	eastWant := fileDesired(t, "director-ka-east.yaml")
	eastWant.L7 = []model.L7Service{{VIP: netip.MustParseAddr("203.0.113.10"), Name: "ka/web"}}
	reaches(t, east, eastWant, "director ka-east equals the file model (and the L7 state of ka/web)")
	reaches(t, west, fileDesired(t, "director-ka-west.yaml"), "director ka-west equals the file model")
	reaches(t, gw1, fileGateway(t, "netd-ka-gw-1.yaml"), "netd on ka-gw-1 equals the file model")
	reaches(t, gww, fileGateway(t, "netd-ka-gw-w.yaml"), "netd on ka-gw-w equals the file model")
	reaches(t, worker, fileGateway(t, "netd-ka-worker.yaml"), "netd on ka-worker equals the file model")
	for name, n := range map[string]int{"ka-east": len(east.all()), "ka-west": len(west.all())} {
		if n != 1 {
			t.Errorf("director %s emitted %d models for one unchanged state, want 1", name, n)
		}
	}

	// ka-gw-2 becomes Ready: weight 1 on every ka-east service.
	setReady(t, kc, "ka-gw-2", true)
	eventually(t, 30*time.Second, "ka-gw-2 gets weight 1", func() (bool, string) {
		d, _ := east.last()
		for _, s := range d.Services {
			i := slices.IndexFunc(s.RealServers, func(r model.RealServer) bool { return r.Addr.String() == "198.18.2.3" })
			if i < 0 || s.RealServers[i].Weight != 1 {
				return false, fmt.Sprintf("%s: %+v", s, s.RealServers)
			}
		}
		return len(d.Services) == 4, fmt.Sprintf("%d services", len(d.Services))
	})

	// Deleting web: the ipam controller releases its VIP, and both the
	// director and netd drop it; the other VIPs stay.
	if err := kc.CoreV1().Services("ka").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "203.0.113.10 leaves the models", func() (bool, string) {
		d, _ := east.last()
		g, _ := gw1.last()
		var keys []string
		for _, s := range d.Services {
			keys = append(keys, s.String())
		}
		want := []string{"198.51.100.7:53/tcp", "198.51.100.7:53/udp"}
		return slices.Equal(keys, want) && fmt.Sprint(g.VIPs) == "[198.51.100.7]", fmt.Sprintf("director %v, netd %v", keys, g.VIPs)
	})
	if g, _ := gww.last(); fmt.Sprint(g.VIPs) != "[203.0.113.130]" {
		t.Errorf("netd on ka-gw-w changed to %v when a ka-east Service was deleted", g.VIPs)
	}
}
