package controller

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

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
		// Deleted without our finalizer (or after it was removed).
		c.release(key, nil)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get Service %s from cache: %w", key, err)
	}
	if c.isIntermediate(key, svc.ResourceVersion) {
		// The cache shows the state between our two writes; the event
		// for the second is on its way. Syncing now would only conflict.
		return nil
	}

	if !wantsVIP(svc) || svc.DeletionTimestamp != nil {
		if !ownedByUs(svc) {
			c.release(key, nil)
			return nil // not ours: never touch it
		}
		if err := c.apply(ctx, svc, planFor(ipam.Allocation{})); err != nil {
			return err
		}
		c.release(key, svc)
		return nil
	}

	req, err := ipam.ParseAnnotations(svc.Annotations, c.opts.DefaultEnvironment)
	if err != nil {
		// The user's input is wrong: say what to fix, keep what exists.
		c.reject(svc, ReasonInvalidAnnotation, err)
		return nil
	}
	if _, held := c.alloc.Lookup(key); !held {
		// A VIP recorded in status (say, before a restart) is kept when
		// it still fits the request.
		if ip, ok := statusIP(svc); ok {
			if _, err := c.alloc.Assign(key, ip); err != nil {
				c.log.Warn("VIP recorded in status cannot be kept", "service", key, "vip", ip, "err", err)
			}
		}
	}
	before, held := c.alloc.Lookup(key)
	al, err := c.alloc.Allocate(key, req.Request)
	if err != nil {
		c.reject(svc, reasonFor(err), err)
		return nil
	}
	c.markPending(key, false)
	if err := c.apply(ctx, svc, planFor(al)); err != nil {
		return err
	}
	if !held || before.Address != al.Address {
		c.metrics.allocations.Inc()
		c.recorder.Eventf(svc, corev1.EventTypeNormal, ReasonAllocated, "VIP %s from VIPPool %s, L4Cluster %s", al.Address, al.Pool, al.L4Cluster)
		c.log.Info("VIP allocated", "service", key, "vip", al.Address, "pool", al.Pool, "l4Cluster", al.L4Cluster)
		c.poolQueue.AddAfter(statusKey, statusDelay)
		if held {
			c.retryPending()
		}
	}
	return nil
}

// apply writes the difference between svc and p: metadata first when
// adding (the finalizer must exist before a VIP is published), status first
// when removing (the finalizer goes last, after the VIP is withdrawn).
func (c *Controller) apply(ctx context.Context, svc *corev1.Service, p servicePlan) error {
	if diffService(svc, p).empty() {
		return nil
	}
	svcs := c.opts.Client.CoreV1().Services(svc.Namespace)
	metaFirst := p.finalizer
	cur := svc
	for i, meta := range []bool{metaFirst, !metaFirst} {
		if i == 1 && cur != svc {
			c.setIntermediate(svc.Namespace+"/"+svc.Name, cur.ResourceVersion)
		}
		// Each write starts from the object the previous one returned,
		// so our own write is never a conflict and nothing is lost.
		d := diffService(cur, p)
		var err error
		switch {
		case meta && d.meta != nil:
			cur, err = svcs.Update(ctx, d.meta, metav1.UpdateOptions{FieldManager: "tlb-ipam"})
			if err != nil {
				return fmt.Errorf("update finalizer and annotations of Service %s/%s: %w", svc.Namespace, svc.Name, err)
			}
		case !meta && d.status != nil:
			cur, err = svcs.UpdateStatus(ctx, d.status, metav1.UpdateOptions{FieldManager: "tlb-ipam"})
			if err != nil {
				return fmt.Errorf("update load balancer status of Service %s/%s: %w", svc.Namespace, svc.Name, err)
			}
		}
	}
	return nil
}

// release frees the VIP of key; svc (nil when gone) receives an Event.
func (c *Controller) release(key string, svc *corev1.Service) {
	c.markPending(key, false)
	c.isIntermediate(key, "") // forget any in-between version
	al, ok := c.alloc.Release(key)
	if !ok {
		return
	}
	c.metrics.releases.Inc()
	c.log.Info("VIP released", "service", key, "vip", al.Address, "pool", al.Pool)
	if svc != nil {
		c.recorder.Eventf(svc, corev1.EventTypeNormal, ReasonReleased, "VIP %s returned to VIPPool %s", al.Address, al.Pool)
	}
	c.poolQueue.AddAfter(statusKey, statusDelay)
	c.retryPending()
}

// reject records why svc got no (new) VIP.
func (c *Controller) reject(svc *corev1.Service, reason string, err error) {
	c.metrics.rejections.WithLabelValues(reason).Inc()
	c.markPending(svc.Namespace+"/"+svc.Name, reason == ReasonExhausted)
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
	}
	return err.Error()
}
