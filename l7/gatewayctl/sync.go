package gatewayctl

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
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

// sync is one pass of watch -> model -> plan -> apply over every object.
func (c *Controller) sync(ctx context.Context) error {
	in, err := c.watch.Inputs(gatewayapi.Inputs{})
	if err != nil {
		return err
	}
	plan := planVIPs(in.Classes, in.ClassConfigs, in.Gateways)
	addSetPorts(plan, in.ListenerSets)
	diff := diffVIPs(plan, in.Services)
	vipErr := c.applyVIPs(ctx, plan, diff)

	in.Addresses = gatewaywatch.VIPAddresses(in.Services, plan.counts)
	warnings, evErr := c.warnings(ctx, plan, in.Addresses)
	in.AddressProblems = addressProblems(plan, in.Services, in.Addresses, warnings)
	in.Now = c.clock.Now()
	res := gatewayapi.Build(in)
	st := planStatus(in, plan, diff, res.Status, c.own.pending)
	c.own.sweep()
	if st.empty() {
		return errors.Join(vipErr, evErr)
	}
	return errors.Join(vipErr, evErr, c.applyStatus(ctx, st))
}

// applyVIPs makes the writes diff asks for; a Gateway whose Service name
// is taken gets a warning Event.
func (c *Controller) applyVIPs(ctx context.Context, p vipPlan, d vipDiff) error {
	for gw, msg := range d.conflicts {
		c.log.Warn("VIP Service name taken", "gateway", gw.String(), "err", msg)
		c.event(p, gw, corev1.EventTypeWarning, ReasonVIPServiceConflict, msg)
	}
	if d.empty() {
		return nil
	}
	var errs []error
	for _, s := range d.create {
		gw, _ := gatewaywatch.OwningGateway(s)
		if _, err := c.opts.Kube.CoreV1().Services(s.Namespace).Create(ctx, s, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			errs = append(errs, fmt.Errorf("create VIP Service %s/%s of Gateway %s: %w", s.Namespace, s.Name, gw, err))
			continue
		}
		c.metrics.vipWrites.WithLabelValues("create").Inc()
		c.log.Info("VIP Service created", "gateway", gw.String(), "service", s.Namespace+"/"+s.Name)
		c.event(p, gw, corev1.EventTypeNormal, ReasonVIPServiceCreated, "VIP Service "+s.Name+" created; the IPAM assigns its VIP")
	}
	for _, s := range d.update {
		if _, err := c.opts.Kube.CoreV1().Services(s.Namespace).Update(ctx, s, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
			errs = append(errs, fmt.Errorf("update VIP Service %s/%s: %w", s.Namespace, s.Name, err))
			continue
		}
		c.metrics.vipWrites.WithLabelValues("update").Inc()
	}
	for _, s := range d.delete {
		gw, _ := gatewaywatch.OwningGateway(s)
		// Preconditioned on the UID: a Service recreated meanwhile is
		// another object.
		err := c.opts.Kube.CoreV1().Services(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete VIP Service %s/%s of Gateway %s: %w", s.Namespace, s.Name, gw, err))
			continue
		}
		c.metrics.vipWrites.WithLabelValues("delete").Inc()
		c.log.Info("VIP Service deleted", "gateway", gw.String(), "service", s.Namespace+"/"+s.Name)
	}
	return errors.Join(errs...)
}

// event records an Event on Gateway gw when it is in the cache.
func (c *Controller) event(p vipPlan, gw types.NamespacedName, typ, reason, msg string) {
	if obj, ok := p.ours[gw]; ok && c.recorder != nil {
		c.recorder.Event(obj, typ, reason, msg)
	}
}

// warnings lists the warning Events about Services in the namespaces of
// the Gateways of p that have no VIP yet (none: no request), and asks
// for another sync after Options.AddressRecheck while there are any: the
// IPAM says why it gave no VIP only in such an Event, which changes
// nothing the controller watches.
func (c *Controller) warnings(ctx context.Context, p vipPlan, have map[types.NamespacedName][]netip.Addr) ([]*corev1.Event, error) {
	var nss []string
	for gw := range p.services {
		if len(have[gw]) == 0 && !slices.Contains(nss, gw.Namespace) {
			nss = append(nss, gw.Namespace)
		}
	}
	if len(nss) == 0 {
		return nil, nil
	}
	c.queue.AddAfter(syncKey, c.opts.AddressRecheck)
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
