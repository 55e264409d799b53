package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
)

// poolCollector exports each VIPPool's used and free addresses as this
// replica's allocator counts them, at scrape time. Pools come from the
// VIPPool objects; a pool the allocator does not hold (a replica that is
// not the leader, a pool refused as invalid) is left out rather than
// reported empty.
type poolCollector struct {
	c          *Controller
	used, free *prometheus.Desc
}

func registerPoolCollector(reg prometheus.Registerer, c *Controller) {
	if reg == nil {
		return
	}
	reg.MustRegister(poolCollector{c: c,
		used: prometheus.NewDesc("tlb_ipam_pool_used_addresses",
			"Addresses of the VIPPool held (allocated to Services or reserved by other Services).", []string{"pool"}, nil),
		free: prometheus.NewDesc("tlb_ipam_pool_free_addresses",
			"Addresses of the VIPPool still free to allocate.", []string{"pool"}, nil),
	})
}

// Describe implements prometheus.Collector.
func (p poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- p.used
	ch <- p.free
}

// Collect implements prometheus.Collector.
func (p poolCollector) Collect(ch chan<- prometheus.Metric) {
	objs, err := p.c.pools.List(labels.Everything())
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, o := range objs {
		name := ""
		if m, ok := o.(interface{ GetName() string }); ok {
			name = m.GetName()
		}
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		u := p.c.alloc.PoolUsage(name)
		if u.Used+u.Free == 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(p.used, prometheus.GaugeValue, float64(u.Used), name)
		ch <- prometheus.MustNewConstMetric(p.free, prometheus.GaugeValue, float64(u.Free), name)
	}
}
