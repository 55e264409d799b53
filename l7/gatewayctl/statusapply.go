package gatewayctl

import (
	"context"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// statusWriters is how many status writes run at once: each is one
// round trip to the API server, and a sync after 500 new routes has 500.
const statusWriters = 16

// applyStatus writes each changed status to the status subresource,
// statusWriters at a time. The cached resourceVersion makes each write
// conditional: an object changed meanwhile is a conflict, and the sync is
// retried from the newer one.
func (c *Controller) applyStatus(ctx context.Context, w statusWrites) error {
	opts := metav1.UpdateOptions{FieldManager: fieldManager}
	gw := c.opts.Gateway.GatewayV1()
	type write struct {
		kind, ns, name string
		do             func() error
	}
	var writes []write
	add := func(kind, ns, name string, do func() error) {
		writes = append(writes, write{kind, ns, name, do})
	}
	for _, o := range w.classes {
		add("GatewayClass", "", o.Name, func() error { _, err := gw.GatewayClasses().UpdateStatus(ctx, o, opts); return err })
	}
	for _, o := range w.gateways {
		add("Gateway", o.Namespace, o.Name, func() error { _, err := gw.Gateways(o.Namespace).UpdateStatus(ctx, o, opts); return err })
	}
	for _, o := range w.http {
		add("HTTPRoute", o.Namespace, o.Name, func() error { _, err := gw.HTTPRoutes(o.Namespace).UpdateStatus(ctx, o, opts); return err })
	}
	for _, o := range w.grpc {
		add("GRPCRoute", o.Namespace, o.Name, func() error { _, err := gw.GRPCRoutes(o.Namespace).UpdateStatus(ctx, o, opts); return err })
	}
	for _, o := range w.tls {
		add("TLSRoute", o.Namespace, o.Name, func() error { _, err := gw.TLSRoutes(o.Namespace).UpdateStatus(ctx, o, opts); return err })
	}
	for _, o := range w.policies {
		add("TrafficPolicy", o.Namespace, o.Name, func() error {
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
			if err != nil {
				return err
			}
			u := &unstructured.Unstructured{Object: obj}
			u.SetAPIVersion(TrafficPolicyResource.GroupVersion().String())
			u.SetKind("TrafficPolicy")
			_, err = c.opts.Dynamic.Resource(TrafficPolicyResource).Namespace(o.Namespace).UpdateStatus(ctx, u, opts)
			return err
		})
	}

	errs := make([]error, len(writes))
	sem := make(chan struct{}, statusWriters)
	var wg sync.WaitGroup
	for i, wr := range writes {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := wr.do(); err != nil {
				errs[i] = fmt.Errorf("update status of %s %s: %w", wr.kind, joinName(wr.ns, wr.name), err)
				return
			}
			c.metrics.wroteStatus(wr.kind)
			c.log.Debug("status written", "kind", wr.kind, "object", joinName(wr.ns, wr.name))
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func joinName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
