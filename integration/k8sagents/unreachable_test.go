//go:build k8s

package k8sagents

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/integration/apiproxy"
	netdkube "github.com/tlbproject/tlb/netd/kube"
	"github.com/tlbproject/tlb/tlb/model"
)

// outage is how long the API server stays unreachable: long enough for
// the informers to lose their watches and fail several relists.
const outage = 10 * time.Second

// TestNothingEmittedWhileAPIServerUnreachable runs both sources through a
// proxy, cuts the proxy after they have synced, changes the API server
// behind their back, and checks that during the outage nothing at all is
// emitted (in particular no empty model: the last one stays programmed),
// that the sources did try to reach the API server, and that once it is
// reachable again they emit the new state, keeping what was there.
func TestNothingEmittedWhileAPIServerUnreachable(t *testing.T) {
	kc, dc := clientsFor(t, server.Config)
	createCluster(t, dc, "ka-cut", "ka-cut", "ka-cut", map[string][]string{"ka-cut-a": {"198.51.100.128/25"}})
	createNode(t, kc, "ka-gw-cut", "198.18.4.2", true, map[string]string{api.LabelGateway: "true", api.LabelGatewayGroup: "ka-cut"})
	ensureNamespace(t, kc, "ka-cut")
	createWithStatus(t, kc, lbService("ka-cut", "first", "198.51.100.130", svcPort("http", 80, corev1.ProtocolTCP)), "ka-cut", "198.51.100.130")

	host := server.Config.Host
	px := apiproxy.Start(t, host[len("https://"):])
	cfg := *server.Config
	cfg.Host = "https://" + px.Addr()
	pkc, pdc := clientsFor(t, &cfg)
	director := runDirector(t, pkc, pdc, "ka-cut")
	gateway := runNetd(t, pkc, pdc, "ka-gw-cut", netdkube.DefaultLocal())

	first := netip.MustParseAddr("198.51.100.130")
	second := netip.MustParseAddr("198.51.100.131")
	eventually(t, 30*time.Second, "first models", func() (bool, string) {
		d, _ := director.last()
		g, _ := gateway.last()
		return vipsOf(d).String() == "[198.51.100.130]" && fmt.Sprint(g.VIPs) == "[198.51.100.130]",
			fmt.Sprintf("director %v, netd %v", vipsOf(d), g.VIPs)
	})
	before := [2]int{len(director.all()), len(gateway.all())}

	px.SetCut(true)
	// Behind the sources' back: a new Service in the cluster.
	createWithStatus(t, kc, lbService("ka-cut", "second", second.String(), svcPort("http", 80, corev1.ProtocolTCP)), "ka-cut", second.String())
	time.Sleep(outage)
	if after := [2]int{len(director.all()), len(gateway.all())}; after != before {
		t.Fatalf("models emitted while the API server was unreachable: director %d -> %d, netd %d -> %d; last %+v / %+v",
			before[0], after[0], before[1], after[1], director.all()[after[0]-1], gateway.all()[after[1]-1])
	}
	if px.Refused() == 0 {
		t.Fatal("the sources never tried to reach the API server during the outage; the test proves nothing")
	}
	t.Logf("%d connection attempts refused during the %s outage; nothing emitted", px.Refused(), outage)

	px.SetCut(false)
	eventually(t, 90*time.Second, "the new Service is served once the API server is back", func() (bool, string) {
		d, _ := director.last()
		g, _ := gateway.last()
		return slices.Equal(vipsOf(d), []netip.Addr{first, second}) && slices.Equal(g.VIPs, []netip.Addr{first, second}),
			fmt.Sprintf("director %v, netd %v", vipsOf(d), g.VIPs)
	})
	for _, d := range director.all() {
		if !slices.Contains(vipsOf(d), first) {
			t.Errorf("the director emitted a model without %s: %+v", first, d)
		}
	}
	for _, g := range gateway.all() {
		if !slices.Contains(g.VIPs, first) {
			t.Errorf("netd emitted a model without %s: %+v", first, g)
		}
	}
}

type addrs []netip.Addr

func (a addrs) String() string { return fmt.Sprint([]netip.Addr(a)) }

// vipsOf returns the sorted, unique VIPs of a director model.
func vipsOf(d model.Desired) addrs {
	var out addrs
	for _, s := range d.Services {
		if !slices.Contains(out, s.VIP) {
			out = append(out, s.VIP)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}
