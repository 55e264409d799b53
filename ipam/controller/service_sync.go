package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/ipam"
)

// Event reasons, for users reading `kubectl describe service`.
const (
	ReasonAllocated         = "VIPAllocated"
	ReasonReleased          = "VIPReleased"
	ReasonInvalidAnnotation = "InvalidAnnotation"
	ReasonExhausted         = "PoolExhausted"
	ReasonInUse             = "VIPInUse"
	ReasonNoPool            = "NoMatchingPool"
	// ReasonPoolNotLoaded: the Service's VIP is in no loaded pool while
	// the pools are invalid; it is kept.
	ReasonPoolNotLoaded = "VIPPoolNotLoaded"
)

// syncService brings one Service to its desired state: model (what the
// allocator says), plan (the TLB-owned fields), diff, apply.
func (c *Controller) syncService(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // a bad key will never work; drop it
	}
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		// Deleted: its VIP is free.
		c.release(key, nil)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get Service %s from cache: %w", key, err)
	}

	if !wantsVIP(svc) || svc.DeletionTimestamp != nil {
		if !ownedByUs(svc) {
			// Not ours: never touch it, but never hand out what its
			// status holds either.
			c.release(key, nil)
			ips := statusIPs(svc)
			if conflicts := c.alloc.Reserve(key, ips); len(conflicts) > 0 && svc.DeletionTimestamp == nil {
				c.log.Warn("Service of another load balancer holds a VIP of TLB in its status", "service", key, "vip", conflicts)
			}
			if len(ips) > 0 {
				c.poolQueue.AddAfter(statusKey, statusDelay)
			}
			return nil
		}
		if err := c.apply(ctx, svc, planFor(nil)); err != nil {
			return err
		}
		c.release(key, svc)
		return nil
	}

	if _, held := c.alloc.Lookup(key); !held {
		// The VIPs recorded in status (say, before a restart) are held,
		// whether or not a loaded pool holds them.
		c.assignFromStatus(key, svc)
	}
	req, err := ipam.ParseAnnotations(svc.Annotations, c.opts.DefaultEnvironment)
	if err == nil {
		req.Request, err = familyRequest(svc, req.Request)
	}
	if err != nil {
		// The user's input is wrong: say what to fix, keep what exists.
		c.reject(svc, ReasonInvalidAnnotation, err)
		return nil
	}
	if group, ok := svc.Annotations[api.AnnotationGatewayGroup]; ok {
		// The objects as cached, even while they do not form a valid
		// configuration: the check reads only names and labels.
		pools, clusters, _, _ := c.readConfig()
		if err := CheckGatewayGroup(group, req.Request, pools, clusters); err != nil {
			c.reject(svc, ReasonGatewayGroupNotServed, err)
			return nil
		}
	}
	before, held := c.alloc.Lookup(key)
	if i := slices.IndexFunc(before, func(al ipam.Allocation) bool { return al.Pool == "" }); i >= 0 && !c.configValid.Load() {
		// Its pool may be one the controller could not load: moving the
		// VIP now would be a guess. Keep it until the pools are valid.
		c.reject(svc, ReasonPoolNotLoaded, fmt.Errorf("VIP %s of Service %s is in no loaded VIPPool while the VIPPool configuration is invalid", before[i].Address, key))
		return nil
	}
	als, err := c.alloc.Allocate(key, req.Request)
	if err != nil {
		if req.Stack == ipam.RequireDualStack {
			err = fmt.Errorf("spec.ipFamilyPolicy RequireDualStack needs one VIP of each of spec.ipFamilies %v from one L4Cluster: %w", svc.Spec.IPFamilies, err)
		}
		c.reject(svc, reasonFor(err), err)
		return nil
	}
	c.markPending(key, false)
	if err := c.apply(ctx, svc, planFor(als)); err != nil {
		return err
	}
	if !held || !slices.Equal(before, als) {
		vips, pools := vipList(als)
		c.metrics.allocations.Inc()
		c.recorder.Eventf(svc, corev1.EventTypeNormal, ReasonAllocated, "VIP %s from VIPPool %s, L4Cluster %s", joinAddrs(vips), strings.Join(pools, ","), als[0].L4Cluster)
		c.log.Info("VIP allocated", "service", key, "vip", vips, "pool", pools, "l4Cluster", als[0].L4Cluster)
		c.poolQueue.AddAfter(statusKey, statusDelay)
		if held {
			c.retryPending()
		}
	}
	return nil
}

// apply makes the one write that brings svc to p, if any (diffService).
func (c *Controller) apply(ctx context.Context, svc *corev1.Service, p servicePlan) error {
	w := diffService(svc, p)
	if w == nil {
		return nil
	}
	// The cached resourceVersion makes the write conditional: a Service
	// changed meanwhile is a conflict, retried from the newer object.
	if _, err := c.opts.Client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, w, metav1.UpdateOptions{FieldManager: "tlb-ipam"}); err != nil {
		return fmt.Errorf("update status.loadBalancer and annotations %s, %s of Service %s/%s: %w",
			api.AnnotationAssignedPool, api.AnnotationAssignedL4Cluster, svc.Namespace, svc.Name, err)
	}
	return nil
}

// release frees the VIP of key; svc (nil when gone) receives an Event.
func (c *Controller) release(key string, svc *corev1.Service) {
	c.markPending(key, false)
	als, ok := c.alloc.Release(key)
	if !ok {
		return
	}
	vips, pools := vipList(als)
	c.metrics.releases.Inc()
	c.log.Info("VIP released", "service", key, "vip", vips, "pool", pools)
	if svc != nil && len(als) > 0 {
		c.recorder.Eventf(svc, corev1.EventTypeNormal, ReasonReleased, "VIP %s returned to VIPPool %s", joinAddrs(vips), strings.Join(pools, ","))
	}
	c.poolQueue.AddAfter(statusKey, statusDelay)
	c.retryPending()
}

// reject records why svc got no (new) VIP.
func (c *Controller) reject(svc *corev1.Service, reason string, err error) {
	c.metrics.rejections.WithLabelValues(reason).Inc()
	// Refusals that a pool change or a freed address may lift are tried
	// again then (InUse too: the holder may release the address); an
	// invalid annotation waits for the user.
	c.markPending(svc.Namespace+"/"+svc.Name, reason == ReasonExhausted || reason == ReasonNoPool || reason == ReasonPoolNotLoaded ||
		reason == ReasonGatewayGroupNotServed || reason == ReasonInUse)
	c.log.Warn("VIP request refused", "service", svc.Namespace+"/"+svc.Name, "reason", reason, "err", err)
	c.recorder.Event(svc, corev1.EventTypeWarning, reason, hint(reason, err))
}

func reasonFor(err error) string {
	switch {
	case errors.Is(err, ipam.ErrExhausted):
		return ReasonExhausted
	case errors.Is(err, ipam.ErrInUse):
		return ReasonInUse
	default:
		return ReasonNoPool
	}
}

// hint turns an error into an Event message that says what to fix.
func hint(reason string, err error) string {
	switch reason {
	case ReasonExhausted:
		return err.Error() + "; add CIDRs to the VIPPool, add a VIPPool or L4Cluster to the environment, or release VIPs"
	case ReasonInUse:
		return err.Error() + "; choose another address in tlb.io/vip or remove the annotation"
	case ReasonNoPool:
		return err.Error() + "; check tlb.io/environment, tlb.io/pool and tlb.io/vip against `kubectl get vippools,l4clusters`"
	case ReasonGatewayGroupNotServed:
		return err.Error() + "; point the GatewayClass's GatewayClassConfig at a gateway group of its environment, or label an L4Cluster of that environment with it"
	case ReasonPoolNotLoaded:
		return err.Error() + "; the VIP is kept until the VIPPools and L4Clusters are fixed (the ipam log names the object and field)"
	}
	return err.Error()
}
