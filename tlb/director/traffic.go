package director

import (
	"net/netip"
	"strconv"
	"sync"

	"github.com/moby/ipvs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/tlb/model"
)

// IPVSStats is the part of IPVS the traffic collector reads: the services
// with their counters, and each service's real servers with theirs.
// *ipvs.Handle implements it. Give the collector a handle of its own: an
// *ipvs.Handle is one netlink socket, not safe for two goroutines, and the
// director's reconciles use theirs concurrently with scrapes.
type IPVSStats interface {
	GetServices() ([]*ipvs.Service, error)
	GetDestinations(*ipvs.Service) ([]*ipvs.Destination, error)
}

// Owner says which IPVS services are the director's. *Director implements
// it.
type Owner interface {
	Owned() []model.Key
}

var _ Owner = (*Director)(nil)

// TrafficCollector exports IPVS's own per-service and per-real-server
// counters at scrape time, for the services the director owns only: a
// foreign IPVS service never becomes a series, and every label value (VIP,
// port, protocol, real server address) is one the director programmed from
// its model. The kernel counters are read when Prometheus scrapes, so
// nothing is cached and a service the director gives up disappears with
// it.
//
// moby/ipvs reads the kernel's 32-bit connection and packet counters (the
// byte counters are 64-bit): they wrap, which rate() treats as a counter
// reset.
type TrafficCollector struct {
	mu    sync.Mutex // serialises scrapes on the one IPVS handle
	ipvs  IPVSStats
	owner Owner

	ok, conns, pktsIn, bytesIn             *prometheus.Desc
	rsConns, rsActive, rsInactive, rsBytes *prometheus.Desc
}

// NewTrafficCollector returns the collector; register it on the binary's
// registry.
func NewTrafficCollector(h IPVSStats, owner Owner) *TrafficCollector {
	svc := []string{"vip", "port", "protocol"}
	rs := []string{"vip", "port", "protocol", "real_server"}
	return &TrafficCollector{
		ipvs: h, owner: owner,
		ok: prometheus.NewDesc("tlb_director_ipvs_stats_read_ok",
			"1 when the last scrape read IPVS's counters, 0 when the netlink read failed (the traffic series are then missing).", nil, nil),
		conns: prometheus.NewDesc("tlb_director_vip_connections_total",
			"Connections IPVS scheduled for the director's virtual service (kernel counter, 32-bit).", svc, nil),
		pktsIn: prometheus.NewDesc("tlb_director_vip_packets_in_total",
			"Packets IPVS received for the director's virtual service (kernel counter, 32-bit).", svc, nil),
		bytesIn: prometheus.NewDesc("tlb_director_vip_bytes_in_total",
			"Bytes IPVS received for the director's virtual service (kernel counter).", svc, nil),
		rsConns: prometheus.NewDesc("tlb_director_real_server_connections_total",
			"Connections IPVS sent to the real server for the virtual service (kernel counter, 32-bit).", rs, nil),
		rsActive: prometheus.NewDesc("tlb_director_real_server_active_connections",
			"Active (established) connections IPVS tracks to the real server for the virtual service.", rs, nil),
		rsInactive: prometheus.NewDesc("tlb_director_real_server_inactive_connections",
			"Inactive connections (any state but established) IPVS tracks to the real server for the virtual service.", rs, nil),
		rsBytes: prometheus.NewDesc("tlb_director_real_server_bytes_in_total",
			"Bytes IPVS forwarded to the real server for the virtual service (kernel counter).", rs, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *TrafficCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.ok, c.conns, c.pktsIn, c.bytesIn, c.rsConns, c.rsActive, c.rsInactive, c.rsBytes} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one GetServices, then one
// GetDestinations per owned service. A failed read reports
// tlb_director_ipvs_stats_read_ok 0 and the series read so far.
func (c *TrafficCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok := 1.0
	if err := c.collect(ch); err != nil {
		ok = 0
	}
	ch <- prometheus.MustNewConstMetric(c.ok, prometheus.GaugeValue, ok)
}

func (c *TrafficCollector) collect(ch chan<- prometheus.Metric) error {
	owned := map[model.Key]bool{}
	for _, k := range c.owner.Owned() {
		owned[k] = true
	}
	svcs, err := c.ipvs.GetServices()
	if err != nil {
		return err
	}
	for _, s := range svcs {
		k, ok := serviceKey(s)
		if !ok || !owned[k] {
			continue
		}
		dests, err := c.ipvs.GetDestinations(s)
		if err != nil {
			return err
		}
		labels := []string{k.VIP.String(), strconv.Itoa(int(k.Port)), string(k.Protocol)}
		counter(ch, c.conns, float64(s.Stats.Connections), labels...)
		counter(ch, c.pktsIn, float64(s.Stats.PacketsIn), labels...)
		counter(ch, c.bytesIn, float64(s.Stats.BytesIn), labels...)
		for _, d := range dests {
			addr, ok := netip.AddrFromSlice(d.Address)
			if !ok {
				continue
			}
			rs := append(labels[:3:3], addr.Unmap().String())
			counter(ch, c.rsConns, float64(d.Stats.Connections), rs...)
			counter(ch, c.rsBytes, float64(d.Stats.BytesIn), rs...)
			ch <- prometheus.MustNewConstMetric(c.rsActive, prometheus.GaugeValue, float64(d.ActiveConnections), rs...)
			ch <- prometheus.MustNewConstMetric(c.rsInactive, prometheus.GaugeValue, float64(d.InactiveConnections), rs...)
		}
	}
	return nil
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}
