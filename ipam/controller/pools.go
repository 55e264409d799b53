package controller

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tlbproject/tlb/api/v1alpha1"
	"github.com/tlbproject/tlb/ipam"
)

// readConfig converts the cached VIPPools and L4Clusters into the
// allocator's model. Errors name the object and field.
func (c *Controller) readConfig() ([]v1alpha1.VIPPool, []v1alpha1.L4Cluster, *ipam.Config, error) {
	var pools []v1alpha1.VIPPool
	var clusters []v1alpha1.L4Cluster
	objs, err := c.pools.List(labels.Everything())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list VIPPools: %w", err)
	}
	for _, o := range objs {
		var p v1alpha1.VIPPool
		if err := fromUnstructured(o, &p); err != nil {
			return nil, nil, nil, err
		}
		pools = append(pools, p)
	}
	objs, err = c.clusters.List(labels.Everything())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list L4Clusters: %w", err)
	}
	for _, o := range objs {
		var cl v1alpha1.L4Cluster
		if err := fromUnstructured(o, &cl); err != nil {
			return nil, nil, nil, err
		}
		clusters = append(clusters, cl)
	}
	cfg, err := ModelConfig(pools, clusters)
	return pools, clusters, cfg, err
}

// ModelConfig converts VIPPool and L4Cluster objects into the allocator's
// validated Config.
func ModelConfig(pools []v1alpha1.VIPPool, clusters []v1alpha1.L4Cluster) (*ipam.Config, error) {
	var mc []ipam.L4Cluster
	for _, cl := range clusters {
		mc = append(mc, ipam.L4Cluster{Name: cl.Name, Environment: ipam.Environment(cl.Spec.Environment), Capacity: int(cl.Spec.Capacity)})
	}
	var mp []ipam.VIPPool
	for _, p := range pools {
		vp := ipam.VIPPool{Name: p.Name, L4Cluster: p.Spec.L4Cluster, AvoidBuggyIPs: p.Spec.AvoidBuggyIPs}
		for i, s := range p.Spec.CIDRs {
			pfx, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("%w: VIPPool %q: spec.cidrs[%d] %q is not a CIDR", ipam.ErrInvalidConfig, p.Name, i, s)
			}
			vp.Prefixes = append(vp.Prefixes, pfx)
		}
		mp = append(mp, vp)
	}
	return ipam.NewConfig(mc, mp)
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
// good ones when they are inconsistent.
func (c *Controller) applyConfig() error {
	_, _, cfg, err := c.readConfig()
	if err != nil {
		c.configValid.Store(false)
		c.metrics.configValid.Set(0)
		return err
	}
	c.configValid.Store(true)
	c.metrics.configValid.Set(1)
	c.alloc.SetConfig(cfg)
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
		ip, ok := statusIP(svc)
		if !ok {
			continue
		}
		if _, err := c.alloc.Assign(key, ip); err != nil {
			c.log.Warn("VIP recorded in status cannot be kept", "service", key, "vip", ip, "err", err)
			continue
		}
		vips++
	}
	c.log.Info("allocations rebuilt from the API server", "vips", vips, "otherServicesHoldingAddresses", reserved)
}

// writePoolStatus writes used/free counts to every VIPPool and L4Cluster
// whose cached status differs.
func (c *Controller) writePoolStatus(ctx context.Context) error {
	pools, clusters, _, err := c.readConfig()
	if err != nil && pools == nil && clusters == nil {
		return err
	}
	poolsPer := map[string]int32{}
	for _, p := range pools {
		poolsPer[p.Spec.L4Cluster]++
		u := c.alloc.PoolUsage(p.Name)
		want := v1alpha1.VIPPoolStatus{Used: clampInt64(u.Used), Free: clampInt64(u.Free)}
		if p.Status == want {
			continue
		}
		p.Status = want
		if err := c.writeStatus(ctx, v1alpha1.VIPPoolResource.Resource, &p); err != nil {
			return err
		}
	}
	for _, cl := range clusters {
		u := c.alloc.ClusterUsage(cl.Name)
		want := v1alpha1.L4ClusterStatus{Used: clampInt64(u.Used), Free: clampInt64(u.Free), Pools: poolsPer[cl.Name]}
		if cl.Status == want {
			continue
		}
		cl.Status = want
		if err := c.writeStatus(ctx, v1alpha1.L4ClusterResource.Resource, &cl); err != nil {
			return err
		}
	}
	return nil
}

func (c *Controller) writeStatus(ctx context.Context, resource string, obj metav1.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("encode status of %s %q: %w", resource, obj.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(v1alpha1.SchemeGroupVersion.String())
	gvr := v1alpha1.SchemeGroupVersion.WithResource(resource)
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.opts.Dynamic.Resource(gvr).UpdateStatus(tctx, u, metav1.UpdateOptions{FieldManager: "tlb-ipam"}); err != nil {
		return fmt.Errorf("update status of %s %q: %w", resource, obj.GetName(), err)
	}
	return nil
}

func clampInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}
