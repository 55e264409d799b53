package gatewayctl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tlbproject/tlb/l7/gatewayapi"
	"github.com/tlbproject/tlb/l7/gatewaywatch"
)

// Event reasons on Gateways.
const (
	ReasonVIPServiceCreated  = "VIPServiceCreated"
	ReasonVIPServiceConflict = "VIPServiceNameTaken"
)

// fieldManager names the controller in managedFields.
const fieldManager = "tlb-gateway-controller"

// syncVIPs writes the VIP Services the plan asks for (vipKey's sync).
func (c *Controller) syncVIPs(ctx context.Context) error {
	in, err := c.watch.Inputs(gatewayapi.Inputs{})
	if err != nil {
		return err
	}
	plan := planVIPs(in.Classes, in.ClassConfigs, in.Gateways)
	return c.applyVIPs(ctx, plan, diffVIPs(plan, in.Services))
}

// sync is one pass of watch -> model -> plan -> apply over every object
// but the VIP Services (syncVIPs writes those beside it): the status is
// computed from the VIP Services as cached. It logs what it wrote and
// where its time went (at debug level when it wrote nothing).
func (c *Controller) sync(ctx context.Context) error {
	began := c.clock.Now()
	in, err := c.watch.Inputs(gatewayapi.Inputs{})
	if err != nil {
		return err
	}
	plan := planVIPs(in.Classes, in.ClassConfigs, in.Gateways)
	addSetPorts(plan, in.ListenerSets)
	diff := diffVIPs(plan, in.Services)
	in.Addresses = diff.addresses(plan, in.Services)
	warnings, evErr := c.warnings(ctx, diff)
	in.AddressProblems = addressProblems(plan, diff, warnings)
	in.Now = c.clock.Now()
	res := gatewayapi.Build(in)
	st := planStatus(in, plan, diff, res.Status, c.own.pending)
	c.own.sweep()
	built := c.clock.Now()
	var stErr error
	if !st.empty() {
		stErr = c.applyStatus(ctx, st)
	}
	level := slog.LevelDebug
	if !st.empty() {
		level = slog.LevelInfo
	}
	c.log.Log(ctx, level, "synced", "statusWrites", st.len(), "buildSeconds", built.Sub(began).Seconds(), "statusSeconds", c.clock.Since(built).Seconds())
	return errors.Join(evErr, stErr)
}

// applyVIPs makes the writes diff asks for, statusWriters at a time (50
// new Gateways are 50 creates); a Gateway whose Service name is taken
// gets a warning Event.
func (c *Controller) applyVIPs(ctx context.Context, p vipPlan, d vipDiff) error {
	for gw, msg := range d.conflicts {
		c.log.Warn("VIP Service name taken", "gateway", gw.String(), "err", msg)
		c.event(p, gw, corev1.EventTypeWarning, ReasonVIPServiceConflict, msg)
	}
	if d.empty() {
		return nil
	}
	services := c.opts.Kube.CoreV1().Services
	var writes []func() error
	for _, s := range d.create {
		writes = append(writes, func() error {
			gw, _ := gatewaywatch.OwningGateway(s)
			_, err := services(s.Namespace).Create(ctx, s, metav1.CreateOptions{FieldManager: fieldManager})
			if apierrors.IsAlreadyExists(err) {
				// Created by the previous sync, not in the cache yet:
				// the informer brings it, and with it another sync.
				return nil
			}
			if err != nil {
				return fmt.Errorf("create VIP Service %s/%s of Gateway %s: %w", s.Namespace, s.Name, gw, err)
			}
			c.metrics.vipWrites.WithLabelValues("create").Inc()
			c.log.Info("VIP Service created", "gateway", gw.String(), "service", s.Namespace+"/"+s.Name)
			c.event(p, gw, corev1.EventTypeNormal, ReasonVIPServiceCreated, "VIP Service "+s.Name+" created; the IPAM assigns its VIP")
			return nil
		})
	}
	for _, s := range d.update {
		writes = append(writes, func() error {
			if _, err := services(s.Namespace).Update(ctx, s, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
				return fmt.Errorf("update VIP Service %s/%s: %w", s.Namespace, s.Name, err)
			}
			c.metrics.vipWrites.WithLabelValues("update").Inc()
			return nil
		})
	}
	for _, s := range d.delete {
		writes = append(writes, func() error {
			gw, _ := gatewaywatch.OwningGateway(s)
			// Preconditioned on the UID: a Service recreated meanwhile
			// is another object.
			err := services(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete VIP Service %s/%s of Gateway %s: %w", s.Namespace, s.Name, gw, err)
			}
			c.metrics.vipWrites.WithLabelValues("delete").Inc()
			c.log.Info("VIP Service deleted", "gateway", gw.String(), "service", s.Namespace+"/"+s.Name)
			return nil
		})
	}
	return errors.Join(inParallel(statusWriters, writes)...)
}

// event records an Event on Gateway gw when it is in the cache.
func (c *Controller) event(p vipPlan, gw types.NamespacedName, typ, reason, msg string) {
	if obj, ok := p.ours[gw]; ok && c.recorder != nil {
		c.recorder.Event(obj, typ, reason, msg)
	}
}

// warnings lists the warning Events about Services in the namespaces of
// the Gateways of d with a requested address that has no VIP yet (none:
// no request), and asks for another sync while there are any: the IPAM
// says why it gave no VIP only in such an Event, which changes nothing
// the controller watches. It looks again soon after a Gateway starts
// waiting (the IPAM answers in a moment), then less and less often, up to
// every Options.AddressRecheck (recheck.go).
func (c *Controller) warnings(ctx context.Context, d vipDiff) ([]*corev1.Event, error) {
	var waiting []types.NamespacedName
	for gw := range d.serving {
		if d.waiting(gw) {
			waiting = append(waiting, gw)
		}
	}
	if len(waiting) == 0 {
		c.recheck.reset()
		return nil, nil
	}
	c.queue.AddAfter(syncKey, c.recheck.next(waiting))
	var nss []string
	for _, gw := range waiting {
		if !slices.Contains(nss, gw.Namespace) {
			nss = append(nss, gw.Namespace)
		}
	}
	slices.Sort(nss)
	var out []*corev1.Event
	for _, ns := range nss {
		list, err := c.opts.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: vipEventSelector})
		if err != nil {
			return out, fmt.Errorf("list the warnings about Services in namespace %s (why a Gateway has no VIP): %w", ns, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}
