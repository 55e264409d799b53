package gatewayctl

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// applyStatus writes each changed status to the status subresource. The
// cached resourceVersion makes each write conditional: an object changed
// meanwhile is a conflict, and the sync is retried from the newer one.
func (c *Controller) applyStatus(ctx context.Context, w statusWrites) error {
	var errs []error
	opts := metav1.UpdateOptions{FieldManager: fieldManager}
	gw := c.opts.Gateway.GatewayV1()
	write := func(kind, ns, name string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("update status of %s %s: %w", kind, joinName(ns, name), err))
			return
		}
		c.metrics.wroteStatus(kind)
		c.log.Debug("status written", "kind", kind, "object", joinName(ns, name))
	}
	for _, o := range w.classes {
		_, err := gw.GatewayClasses().UpdateStatus(ctx, o, opts)
		write("GatewayClass", "", o.Name, err)
	}
	for _, o := range w.gateways {
		_, err := gw.Gateways(o.Namespace).UpdateStatus(ctx, o, opts)
		write("Gateway", o.Namespace, o.Name, err)
	}
	for _, o := range w.http {
		_, err := gw.HTTPRoutes(o.Namespace).UpdateStatus(ctx, o, opts)
		write("HTTPRoute", o.Namespace, o.Name, err)
	}
	for _, o := range w.grpc {
		_, err := gw.GRPCRoutes(o.Namespace).UpdateStatus(ctx, o, opts)
		write("GRPCRoute", o.Namespace, o.Name, err)
	}
	for _, o := range w.tls {
		_, err := gw.TLSRoutes(o.Namespace).UpdateStatus(ctx, o, opts)
		write("TLSRoute", o.Namespace, o.Name, err)
	}
	for _, o := range w.policies {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err == nil {
			u := &unstructured.Unstructured{Object: obj}
			u.SetAPIVersion(TrafficPolicyResource.GroupVersion().String())
			u.SetKind("TrafficPolicy")
			_, err = c.opts.Dynamic.Resource(TrafficPolicyResource).Namespace(o.Namespace).UpdateStatus(ctx, u, opts)
		}
		write("TrafficPolicy", o.Namespace, o.Name, err)
	}
	return errors.Join(errs...)
}

func joinName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
