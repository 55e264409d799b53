package director

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/moby/ipvs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tlbproject/tlb/tlb/model"
)

// setStats gives the fake kernel's service vip:port (and each of its real
// servers) counters, as the kernel would after some traffic.
func setStats(t *testing.T, f *fakeIPVS, vip string, port uint16, st ipvs.SvcStats, active, inactive int) {
	t.Helper()
	for _, s := range f.svcs {
		if s.svc.Address.String() == vip && s.svc.Port == port {
			s.svc.Stats = st
			for i := range s.dests {
				s.dests[i].Stats = ipvs.DstStats{Connections: st.Connections, BytesIn: st.BytesIn}
				s.dests[i].ActiveConnections = active
				s.dests[i].InactiveConnections = inactive
			}
			return
		}
	}
	t.Fatalf("no service %s:%d in the fake kernel", vip, port)
}

func TestTrafficCollectorExportsOwnedServicesOnly(t *testing.T) {
	f := &fakeIPVS{}
	foreignService(t, f) // 203.0.113.99:443, not the director's
	d := newDirector(t, f, Options{})
	web := service("203.0.113.10", 80, mrs("198.18.2.2", 1))
	if _, err := d.Reconcile(context.Background(), desired(web)); err != nil {
		t.Fatal(err)
	}
	setStats(t, f, "203.0.113.10", 80, ipvs.SvcStats{Connections: 7, PacketsIn: 70, BytesIn: 7000}, 3, 4)
	setStats(t, f, "203.0.113.99", 443, ipvs.SvcStats{Connections: 9, PacketsIn: 90, BytesIn: 9000}, 1, 1)

	c := NewTrafficCollector(f, d)
	want := `
# HELP tlb_director_ipvs_stats_read_ok 1 when the last scrape read IPVS's counters, 0 when the netlink read failed (the traffic series are then missing).
# TYPE tlb_director_ipvs_stats_read_ok gauge
tlb_director_ipvs_stats_read_ok 1
# HELP tlb_director_vip_connections_total Connections IPVS scheduled for the director's virtual service (kernel counter, 32-bit).
# TYPE tlb_director_vip_connections_total counter
tlb_director_vip_connections_total{port="80",protocol="tcp",vip="203.0.113.10"} 7
# HELP tlb_director_vip_packets_in_total Packets IPVS received for the director's virtual service (kernel counter, 32-bit).
# TYPE tlb_director_vip_packets_in_total counter
tlb_director_vip_packets_in_total{port="80",protocol="tcp",vip="203.0.113.10"} 70
# HELP tlb_director_vip_bytes_in_total Bytes IPVS received for the director's virtual service (kernel counter).
# TYPE tlb_director_vip_bytes_in_total counter
tlb_director_vip_bytes_in_total{port="80",protocol="tcp",vip="203.0.113.10"} 7000
# HELP tlb_director_real_server_active_connections Active (established) connections IPVS tracks to the real server for the virtual service.
# TYPE tlb_director_real_server_active_connections gauge
tlb_director_real_server_active_connections{port="80",protocol="tcp",real_server="198.18.2.2",vip="203.0.113.10"} 3
# HELP tlb_director_real_server_inactive_connections Inactive connections (any state but established) IPVS tracks to the real server for the virtual service.
# TYPE tlb_director_real_server_inactive_connections gauge
tlb_director_real_server_inactive_connections{port="80",protocol="tcp",real_server="198.18.2.2",vip="203.0.113.10"} 4
# HELP tlb_director_real_server_connections_total Connections IPVS sent to the real server for the virtual service (kernel counter, 32-bit).
# TYPE tlb_director_real_server_connections_total counter
tlb_director_real_server_connections_total{port="80",protocol="tcp",real_server="198.18.2.2",vip="203.0.113.10"} 7
# HELP tlb_director_real_server_bytes_in_total Bytes IPVS forwarded to the real server for the virtual service (kernel counter).
# TYPE tlb_director_real_server_bytes_in_total counter
tlb_director_real_server_bytes_in_total{port="80",protocol="tcp",real_server="198.18.2.2",vip="203.0.113.10"} 7000
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	// The foreign service's real servers are not even listed.
	for _, call := range f.calls {
		if strings.Contains(call, "203.0.113.99") {
			t.Errorf("collector touched the foreign service: %s", call)
		}
	}

	// The director gives the service up: its series go with it.
	if _, err := d.Reconcile(context.Background(), desired()); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(c); n != 1 {
		t.Errorf("after the service is deleted, %d series, want only tlb_director_ipvs_stats_read_ok", n)
	}
}

// brokenIPVS fails every listing.
type brokenIPVS struct{}

func (brokenIPVS) GetServices() ([]*ipvs.Service, error) { return nil, errors.New("netlink: broken") }
func (brokenIPVS) GetDestinations(*ipvs.Service) ([]*ipvs.Destination, error) {
	return nil, errors.New("netlink: broken")
}

type ownsAll []model.Key

func (o ownsAll) Owned() []model.Key { return o }

func TestTrafficCollectorReportsReadFailure(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewTrafficCollector(brokenIPVS{}, ownsAll{web80()}))
	want := `
# HELP tlb_director_ipvs_stats_read_ok 1 when the last scrape read IPVS's counters, 0 when the netlink read failed (the traffic series are then missing).
# TYPE tlb_director_ipvs_stats_read_ok gauge
tlb_director_ipvs_stats_read_ok 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func web80() model.Key { return service("203.0.113.10", 80).Key() }
