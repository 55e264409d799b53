package controller

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/ipam"
)

// readConfig converts the cached VIPPools and L4Clusters into the
// allocator's model. Errors name the object and field.
func (c *Controller) readConfig() ([]v1alpha1.VIPPool, []v1alpha1.L4Cluster, model, error) {
	var pools []v1alpha1.VIPPool
	var clusters []v1alpha1.L4Cluster
	objs, err := c.pools.List(labels.Everything())
	if err != nil {
		return nil, nil, model{}, fmt.Errorf("list VIPPools: %w", err)
	}
	for _, o := range objs {
		var p v1alpha1.VIPPool
		if err := fromUnstructured(o, &p); err != nil {
			return nil, nil, model{}, err
		}
		pools = append(pools, p)
	}
	objs, err = c.clusters.List(labels.Everything())
	if err != nil {
		return nil, nil, model{}, fmt.Errorf("list L4Clusters: %w", err)
	}
	for _, o := range objs {
		var cl v1alpha1.L4Cluster
		if err := fromUnstructured(o, &cl); err != nil {
			return nil, nil, model{}, err
		}
		clusters = append(clusters, cl)
	}
	m, err := modelConfig(pools, clusters)
	return pools, clusters, m, err
}

// model is the allocator's configuration made of VIPPool and L4Cluster
// objects.
type model struct {
	// cfg is what the allocator serves; nil when the objects are invalid.
	cfg *ipam.Config
}

// modelConfig converts VIPPool and L4Cluster objects into the allocator's
// validated Config. Pools of either family, or both, are accepted.
func modelConfig(pools []v1alpha1.VIPPool, clusters []v1alpha1.L4Cluster) (model, error) {
	var mc []ipam.L4Cluster
	for _, cl := range clusters {
		mc = append(mc, ipam.L4Cluster{Name: cl.Name, Environment: ipam.Environment(cl.Spec.Environment), Capacity: int(cl.Spec.Capacity)})
	}
	var m model
	var mp []ipam.VIPPool
	for _, p := range pools {
		vp := ipam.VIPPool{Name: p.Name, L4Cluster: p.Spec.L4Cluster, AvoidBuggyIPs: p.Spec.AvoidBuggyIPs}
		for i, s := range p.Spec.CIDRs {
			pfx, err := netip.ParsePrefix(s)
			if err != nil {
				return m, fmt.Errorf("%w: VIPPool %q: spec.cidrs[%d] %q is not a CIDR", ipam.ErrInvalidConfig, p.Name, i, s)
			}
			vp.Prefixes = append(vp.Prefixes, pfx)
		}
		mp = append(mp, vp)
	}
	cfg, err := ipam.NewConfig(mc, mp)
	m.cfg = cfg
	return m, err
}

func fromUnstructured(o runtime.Object, into any) error {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("unexpected %T in the VIPPool/L4Cluster cache", o)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("decode %s %q: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// applyConfig hands the cached pools to the allocator, or keeps the last
// good ones when they are inconsistent, and records what is loaded for
// the status of each object.
func (c *Controller) applyConfig() error {
	pools, clusters, m, err := c.readConfig()
	if err != nil {
		c.configValid.Store(false)
		c.metrics.configValid.Set(0)
		c.load.err = err
		c.poolQueue.AddAfter(statusKey, statusDelay)
		return err
	}
	c.configValid.Store(true)
	c.metrics.configValid.Set(1)
	c.alloc.SetConfig(m.cfg)
	c.load = loadedFrom(pools, clusters, m)
	c.poolQueue.AddAfter(statusKey, statusDelay)
	c.retryPending()
	return nil
}

// rebuild records every address that the API server says a Service
// holds, before any new allocation, so that no address in use is handed
// out: the VIPs of TLB's Services, in a loaded pool or not, and what the
// status of any other Service holds. Older Services win a disputed
// address.
func (c *Controller) rebuild() {
	svcs, err := c.services.List(labels.Everything())
	if err != nil {
		c.log.Error("list Services from cache for rebuild", "err", err)
		return
	}
	slices.SortFunc(svcs, func(a, b *corev1.Service) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
			cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name))
	})
	vips, reserved := 0, 0
	for _, svc := range svcs {
		key := svc.Namespace + "/" + svc.Name
		if !wantsVIP(svc) && !ownedByUs(svc) {
			if ips := statusIPs(svc); len(ips) > 0 {
				if conflicts := c.alloc.Reserve(key, ips); len(conflicts) > 0 {
					c.log.Warn("Service of another load balancer holds a VIP of TLB in its status", "service", key, "vip", conflicts)
				}
				reserved++
			}
			continue
		}
		c.queue.Add(key)
		vips += c.assignFromStatus(key, svc)
	}
	c.log.Info("allocations rebuilt from the API server", "vips", vips, "otherServicesHoldingAddresses", reserved)
}
