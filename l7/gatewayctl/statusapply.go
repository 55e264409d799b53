package gatewayctl

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// statusWriters is how many status writes run at once: each is one
// round trip to the API server, and a sync after 500 new routes has 500.
// A write waits mostly for etcd (70-80 ms each on a loaded 2-core machine,
// 16 at a time capped a sync at ~200 writes/s); more at once let etcd
// batch them (437 in 2.4 s instead of 520 in 4.5 s, same machine).
const statusWriters = 64

// statusWrite is one status update to make.
type statusWrite struct {
	kind string
	obj  metav1.Object
	// do writes and returns the resourceVersion the object has now.
	do func() (string, error)
}

// applyStatus writes each changed status to the status subresource,
// statusWriters at a time. The cached resourceVersion makes each write
// conditional. A conflict (the object changed meanwhile) or a NotFound
// (it is gone) is no error: the informer brings the newer object and
// with it another sync, so nothing is retried from stale data.
func (c *Controller) applyStatus(ctx context.Context, w statusWrites) error {
	writes := c.statusWriteList(ctx, w)
	errs := make([]error, len(writes))
	sem := make(chan struct{}, statusWriters)
	var wg sync.WaitGroup
	for i, wr := range writes {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			name := joinName(wr.obj.GetNamespace(), wr.obj.GetName())
			rv, err := wr.do()
			switch {
			case err == nil:
				// A write that changed nothing keeps the version, and
				// no newer one will come to end the record.
				if rv != wr.obj.GetResourceVersion() {
					c.own.wrote(wr.kind, wr.obj)
				}
				c.metrics.wroteStatus(wr.kind)
				c.log.Debug("status written", "kind", wr.kind, "object", name)
			case apierrors.IsConflict(err), apierrors.IsNotFound(err):
				c.metrics.statusStale.WithLabelValues(wr.kind).Inc()
				c.log.Debug("status not written: the cached object is stale", "kind", wr.kind, "object", name, "err", err)
			default:
				errs[i] = fmt.Errorf("update status of %s %s: %w", wr.kind, name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// statusWriteList turns w into the API calls that write it.
func (c *Controller) statusWriteList(ctx context.Context, w statusWrites) []statusWrite {
	opts := metav1.UpdateOptions{FieldManager: fieldManager}
	gw := c.opts.Gateway.GatewayV1()
	var out []statusWrite
	add := func(kind string, o metav1.Object, do func() (metav1.Object, error)) {
		out = append(out, statusWrite{kind: kind, obj: o, do: func() (string, error) {
			got, err := do()
			if err != nil {
				return "", err
			}
			return got.GetResourceVersion(), nil
		}})
	}
	for _, o := range w.classes {
		add(kindGatewayClass, o, func() (metav1.Object, error) { return gw.GatewayClasses().UpdateStatus(ctx, o, opts) })
	}
	for _, o := range w.gateways {
		add(kindGateway, o, func() (metav1.Object, error) { return gw.Gateways(o.Namespace).UpdateStatus(ctx, o, opts) })
	}
	for _, o := range w.http {
		add(kindHTTPRoute, o, func() (metav1.Object, error) { return gw.HTTPRoutes(o.Namespace).UpdateStatus(ctx, o, opts) })
	}
	for _, o := range w.grpc {
		add(kindGRPCRoute, o, func() (metav1.Object, error) { return gw.GRPCRoutes(o.Namespace).UpdateStatus(ctx, o, opts) })
	}
	for _, o := range w.tls {
		add(kindTLSRoute, o, func() (metav1.Object, error) { return gw.TLSRoutes(o.Namespace).UpdateStatus(ctx, o, opts) })
	}
	for _, o := range w.tcp {
		add(kindTCPRoute, o, func() (metav1.Object, error) { return gw.TCPRoutes(o.Namespace).UpdateStatus(ctx, o, opts) })
	}
	for _, o := range w.udp {
		add(kindUDPRoute, o, func() (metav1.Object, error) { return gw.UDPRoutes(o.Namespace).UpdateStatus(ctx, o, opts) })
	}
	for _, o := range w.sets {
		add(kindListenerSet, o, func() (metav1.Object, error) { return gw.ListenerSets(o.Namespace).UpdateStatus(ctx, o, opts) })
	}
	for _, o := range w.btls {
		add(kindBackendTLSPolicy, o, func() (metav1.Object, error) {
			return gw.BackendTLSPolicies(o.Namespace).UpdateStatus(ctx, o, opts)
		})
	}
	for _, o := range w.policies {
		add(kindTrafficPolicy, o, func() (metav1.Object, error) {
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
			if err != nil {
				return nil, err
			}
			u := &unstructured.Unstructured{Object: obj}
			u.SetAPIVersion(TrafficPolicyResource.GroupVersion().String())
			u.SetKind("TrafficPolicy")
			return c.opts.Dynamic.Resource(TrafficPolicyResource).Namespace(o.Namespace).UpdateStatus(ctx, u, opts)
		})
	}
	return out
}

func joinName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}
