package controller

import (
	"context"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tlbproject/tlb/api/v1alpha1"
)

// writePoolStatus writes counts and the Ready condition to every VIPPool
// and L4Cluster whose cached status differs from the plan; a resync with
// nothing changed writes nothing.
func (c *Controller) writePoolStatus(ctx context.Context) error {
	pools, clusters, _, err := c.readConfig()
	if err != nil && pools == nil && clusters == nil {
		return err
	}
	now := time.Now()
	poolsPer := map[string]int32{}
	for _, p := range pools {
		poolsPer[p.Spec.L4Cluster]++
		want, changed := planPoolStatus(&p, c.alloc.PoolUsage(p.Name), c.load.poolReady(&p), now)
		if !changed {
			continue
		}
		p.Status = want
		if err := c.writeStatus(ctx, v1alpha1.VIPPoolResource.Resource, &p); err != nil {
			return err
		}
	}
	for _, cl := range clusters {
		want, changed := planClusterStatus(&cl, c.alloc.ClusterUsage(cl.Name), poolsPer[cl.Name], c.load.clusterReady(&cl), now)
		if !changed {
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
