package agent

import (
	"net/netip"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tlbproject/tlb/netd"
	"github.com/tlbproject/tlb/netd/model"
)

// vipBound is the gauge netd_vip_bound{vip}: 1 for a VIP of the model
// known to be bound on the tunnel, 0 for one that may not be. Label values
// come from the model only: a VIP leaves the gauge once a reconcile
// without it succeeds.
type vipBound struct {
	gauge *prometheus.GaugeVec
	bound map[netip.Addr]bool // what the gauge says, for the next failure
}

func newVIPBound() *vipBound {
	return &vipBound{
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "netd_vip_bound",
			Help: "1 while the VIP is bound on the tunnel (last reconcile succeeded, or it was bound before one that failed), 0 if it may not be.",
		}, []string{"vip"}),
		bound: map[netip.Addr]bool{},
	}
}

// observe records the outcome of one reconcile of desired. After a
// success every VIP of the model is bound and nothing else is reported.
// After a failure a VIP stays 1 only if it was bound before and the plan
// did not have to bind it; every other VIP of the model is 0.
func (v *vipBound) observe(desired model.Gateway, res netd.Result, err error) {
	if err == nil {
		v.gauge.Reset()
		v.bound = make(map[netip.Addr]bool, len(desired.VIPs))
		for _, a := range desired.VIPs {
			v.bound[a] = true
			v.gauge.WithLabelValues(a.String()).Set(1)
		}
		return
	}
	toBind := make(map[netip.Addr]bool, len(res.Plan.AddVIPs))
	for _, a := range res.Plan.AddVIPs {
		toBind[a] = true
	}
	for _, a := range desired.VIPs {
		up := v.bound[a] && !toBind[a]
		v.bound[a] = up
		val := 0.0
		if up {
			val = 1
		}
		v.gauge.WithLabelValues(a.String()).Set(val)
	}
}
