package console

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
	sharedkube "github.com/tlbproject/tlb/internal/kube"
)

// GatewayResource is the Gateway API's Gateway, shown when its CRD exists.
var GatewayResource = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}

// The Warning Events a page shows: of the last recentEvents, at most
// maxEvents of them, found among at most maxEventsScanned read
// eventsPage at a time.
const (
	maxEvents        = 500
	maxEventsScanned = 5000
	eventsPage       = 500
	recentEvents     = time.Hour
)

// KubeSource reads the API server with list calls on every page: VIPPools,
// L4Clusters, TLB Services, the recent Warning Events about TLB's objects,
// the Leases of LeaseNamespace and Gateways. It never reads Secrets.
type KubeSource struct {
	Kube           kubernetes.Interface
	Dynamic        dynamic.Interface
	LeaseNamespace string
	// OwnNamespace is where TLB's Pods run (tlb-system): every Warning
	// Event of it is about us.
	OwnNamespace string
	// Now (nil: Events of any age) dates "recent".
	Now func() time.Time
}

// ReadAPI implements APISource.
func (k KubeSource) ReadAPI(ctx context.Context) (APIState, error) {
	var st APIState
	var err error
	if st.Pools, err = k.pools(ctx); err != nil {
		return APIState{}, err
	}
	if st.Clusters, err = k.clusters(ctx); err != nil {
		return APIState{}, err
	}
	if st.Services, err = k.services(ctx); err != nil {
		return APIState{}, err
	}
	if st.Events, err = k.events(ctx, st.Services); err != nil {
		return APIState{}, err
	}
	if st.Leases, err = k.leases(ctx); err != nil {
		return APIState{}, err
	}
	if st.Gateways, st.GatewaysInstalled, err = k.gateways(ctx); err != nil {
		return APIState{}, err
	}
	return st, nil
}

func (k KubeSource) pools(ctx context.Context) ([]Pool, error) {
	l, err := k.Dynamic.Resource(v1alpha1.VIPPoolResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list VIPPools: %w", err)
	}
	out := make([]Pool, 0, len(l.Items))
	for _, u := range l.Items {
		var p v1alpha1.VIPPool
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &p); err != nil {
			return nil, fmt.Errorf("decode VIPPool %s: %w", u.GetName(), err)
		}
		out = append(out, Pool{Name: p.Name, CIDRs: p.Spec.CIDRs, L4Cluster: p.Spec.L4Cluster, Used: p.Status.Used, Free: p.Status.Free})
	}
	return out, nil
}

func (k KubeSource) clusters(ctx context.Context) ([]L4Cluster, error) {
	l, err := k.Dynamic.Resource(v1alpha1.L4ClusterResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list L4Clusters: %w", err)
	}
	out := make([]L4Cluster, 0, len(l.Items))
	for _, u := range l.Items {
		var c v1alpha1.L4Cluster
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &c); err != nil {
			return nil, fmt.Errorf("decode L4Cluster %s: %w", u.GetName(), err)
		}
		out = append(out, L4Cluster{Name: c.Name, Environment: c.Spec.Environment, Capacity: c.Spec.Capacity, Used: c.Status.Used, Free: c.Status.Free})
	}
	return out, nil
}

func (k KubeSource) services(ctx context.Context) ([]Service, error) {
	l, err := k.Kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Services: %w", err)
	}
	var out []Service
	for i := range l.Items {
		svc := &l.Items[i]
		if sharedkube.IsTLBService(svc) {
			out = append(out, serviceOf(svc))
		}
	}
	return out, nil
}

// serviceOf keeps the fields the page shows, and only those: a Service's
// other annotations (last-applied-configuration and the like) may carry
// anything and never reach the page.
func serviceOf(svc *corev1.Service) Service {
	a := svc.Annotations
	s := Service{Namespace: svc.Namespace, Name: svc.Name, Pool: a[api.AnnotationAssignedPool], L4Cluster: a[api.AnnotationAssignedL4Cluster]}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP != "" {
			s.VIPs = append(s.VIPs, in.IP)
		}
	}
	var req []string
	for _, key := range []string{api.AnnotationEnvironment, api.AnnotationPool, api.AnnotationVIP} {
		if v, ok := a[key]; ok {
			req = append(req, strings.TrimPrefix(key, "tlb.io/")+"="+v)
		}
	}
	s.Requested = strings.Join(req, " ")
	for _, p := range svc.Spec.Ports {
		s.Ports = append(s.Ports, strconv.Itoa(int(p.Port))+"/"+strings.ToLower(string(p.Protocol)))
	}
	if a[api.AnnotationL7] == "true" {
		l7 := &L7Intent{Group: cmp.Or(a[api.AnnotationL7Group], "default"), PathPrefix: cmp.Or(a[api.AnnotationL7PathPrefix], "/"), TLSSecret: a[api.AnnotationL7TLSSecret]}
		for _, h := range strings.Split(a[api.AnnotationL7Hosts], ",") {
			if h = strings.TrimSpace(h); h != "" {
				l7.Hosts = append(l7.Hosts, h)
			}
		}
		s.L7 = l7
	}
	return s
}

// events lists the Warning Events about our objects (ours) seen within
// recentEvents, newest first, at most maxEvents of them.
func (k KubeSource) events(ctx context.Context, svcs []Service) ([]Event, error) {
	isOurs := ourObjects{services: map[string]bool{}, namespace: k.OwnNamespace}
	for _, s := range svcs {
		isOurs.services[s.Namespace+"/"+s.Name] = true
	}
	since := time.Time{}
	if k.Now != nil {
		since = k.Now().Add(-recentEvents)
	}
	var out []Event
	opts := metav1.ListOptions{FieldSelector: "type=" + corev1.EventTypeWarning, Limit: eventsPage}
	for scanned := 0; scanned < maxEventsScanned; {
		l, err := k.Kube.CoreV1().Events("").List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list Events: %w", err)
		}
		scanned += len(l.Items)
		for i := range l.Items {
			e := &l.Items[i]
			last := e.LastTimestamp.Time
			if last.IsZero() {
				last = e.EventTime.Time
			}
			if !isOurs.about(e) || (!since.IsZero() && last.Before(since)) {
				continue
			}
			out = append(out, Event{Namespace: e.InvolvedObject.Namespace, Kind: e.InvolvedObject.Kind, Name: e.InvolvedObject.Name,
				Reason: e.Reason, Message: e.Message, Count: max(e.Count, 1), Last: last})
		}
		if opts.Continue = l.Continue; opts.Continue == "" {
			break
		}
	}
	slices.SortStableFunc(out, func(a, b Event) int { return b.Last.Compare(a.Last) })
	if len(out) > maxEvents {
		out = out[:maxEvents]
	}
	return out, nil
}

// ourObjects tells the Events about TLB's objects from the rest of the
// cluster's: those our components reported (source tlb-*), those about
// a tlb.io object (VIPPool, L4Cluster, TrafficPolicy...), about a Service
// TLB serves, or about anything in our own namespace (the directors',
// netds', gateways' and ipam's Pods, DaemonSets, Deployments).
type ourObjects struct {
	services  map[string]bool
	namespace string
}

func (o ourObjects) about(e *corev1.Event) bool {
	obj := e.InvolvedObject
	group, _, _ := strings.Cut(obj.APIVersion, "/")
	switch {
	case strings.HasPrefix(e.Source.Component, "tlb-"), strings.HasPrefix(e.ReportingController, "tlb"):
		return true
	case group == v1alpha1.GroupName:
		return true
	case obj.Kind == "Service" && o.services[obj.Namespace+"/"+obj.Name]:
		return true
	}
	return o.namespace != "" && obj.Namespace == o.namespace
}

func (k KubeSource) leases(ctx context.Context) ([]Lease, error) {
	if k.LeaseNamespace == "" {
		return nil, nil
	}
	l, err := k.Kube.CoordinationV1().Leases(k.LeaseNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Leases of %s: %w", k.LeaseNamespace, err)
	}
	out := make([]Lease, 0, len(l.Items))
	for _, le := range l.Items {
		x := Lease{Namespace: le.Namespace, Name: le.Name}
		if le.Spec.HolderIdentity != nil {
			x.Holder = *le.Spec.HolderIdentity
		}
		if le.Spec.RenewTime != nil {
			x.Renewed = le.Spec.RenewTime.Time
		}
		out = append(out, x)
	}
	return out, nil
}

// gateways lists Gateway API Gateways; installed is false when the API
// server does not serve the resource (no CRD).
func (k KubeSource) gateways(ctx context.Context) (gws []Gateway, installed bool, err error) {
	l, err := k.Dynamic.Resource(GatewayResource).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("list Gateways: %w", err)
	}
	for _, u := range l.Items {
		gws = append(gws, gatewayOf(u))
	}
	return gws, true, nil
}

func gatewayOf(u unstructured.Unstructured) Gateway {
	g := Gateway{Namespace: u.GetNamespace(), Name: u.GetName()}
	g.Class, _, _ = unstructured.NestedString(u.Object, "spec", "gatewayClassName")
	addrs, _, _ := unstructured.NestedSlice(u.Object, "status", "addresses")
	for _, a := range addrs {
		if m, ok := a.(map[string]any); ok {
			if v, ok := m["value"].(string); ok {
				g.Addresses = append(g.Addresses, v)
			}
		}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Programmed" {
			g.Programmed, _ = m["status"].(string)
		}
	}
	return g
}
