package console

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"

	"github.com/tlbproject/tlb/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// How deploy/ marks the director's and netd's Pods.
const (
	// LabelName is the label whose value names the component of a Pod.
	LabelName = "app.kubernetes.io/name"
	// PodNameDirector is LabelName's value on the directors' Pods.
	PodNameDirector = "tlb-director"
	// PodNameNetd is LabelName's value on netd's Pods.
	PodNameNetd = "tlb-netd"
	// PodNameL7 is LabelName's value on the l7 Pods of a gateway group
	// (DaemonSet tlb-l7-<group>), whose l7 container serves the group's
	// routes (GET /routes).
	PodNameL7 = "tlb-l7"
	// PodNameGateway is LabelName's value on the gateway Pods, Envoy's
	// (DaemonSet tlb-gateway-<group>). Before l7 had Pods of its own
	// (v0.1.0) these held an l7 container too, read as well.
	PodNameGateway = "tlb-gateway"
	// MetricsPortName names the container port of their obs listener.
	MetricsPortName = "metrics"
	// EnvoyStatsPortName names the container port of a gateway Pod's
	// Envoy stats listener (9902 when none is named).
	EnvoyStatsPortName = "stats"

	defaultDirectorObs = 9100 // director.metricsAddress's default port
	defaultNetdObs     = 9101 // netd.metricsAddress's default port
	defaultL7Obs       = 9480 // l7 serve --metrics-addr's default port
	defaultEnvoyStats  = 9902 // l7 bootstrap --stats-address's port in deploy/envoy
)

// PodDiscovery is the ComponentSource of a console in a cluster: on every
// page it lists the director, netd and gateway Pods of Namespace (by their
// app.kubernetes.io/name label) and reads each one's obs listener (the
// gateway Pod's: its l7 container's) at its node's IP (status.hostIP:
// they run on the host network with their listener on that address) and
// its container port named "metrics" (the role's default port when none
// is named). Static endpoints (the --director,
// --netd and --l7 flags) are read as well; a discovered Pod whose name a
// static endpoint already has is left out.
//
// Listing the Pods needs list on pods in Namespace, and nothing else.
type PodDiscovery struct {
	Kube      kubernetes.Interface
	Namespace string
	Static    []Endpoint
	Client    *http.Client
	// L7TokenFile is HTTPComponents.L7TokenFile.
	L7TokenFile string
}

// ListEndpoints implements ComponentSource: the static endpoints, then
// the Pods found. When the Pods cannot be listed the static endpoints are
// still returned, with the error.
func (p PodDiscovery) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	found, err := p.Endpoints(ctx)
	eps := slices.Clone(p.Static)
	for _, ep := range found {
		if !slices.ContainsFunc(p.Static, func(s Endpoint) bool { return s.Role == ep.Role && s.Name == ep.Name }) {
			eps = append(eps, ep)
		}
	}
	return eps, err
}

// ReadComponent implements ComponentSource, as HTTPComponents does.
func (p PodDiscovery) ReadComponent(ctx context.Context, ep Endpoint) Component {
	return HTTPComponents{Client: p.Client, L7TokenFile: p.L7TokenFile}.ReadComponent(ctx, ep)
}

// Endpoints lists the director, netd and gateway Pods of Namespace that have a
// host IP, as endpoints named after their node, sorted by role and name.
func (p PodDiscovery) Endpoints(ctx context.Context) ([]Endpoint, error) {
	sel := fmt.Sprintf("%s in (%s,%s,%s,%s)", LabelName, PodNameDirector, PodNameNetd, PodNameL7, PodNameGateway)
	pods, err := p.Kube.CoreV1().Pods(p.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("discover directors, netd and l7: list pods in %s (%s): %w", p.Namespace, sel, err)
	}
	var out []Endpoint
	for _, pod := range pods.Items {
		if pod.Status.HostIP == "" || pod.DeletionTimestamp != nil {
			continue // not scheduled yet, or going away
		}
		out = append(out, podEndpoints(pod)...)
	}
	slices.SortFunc(out, func(a, b Endpoint) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// podEndpoints are the obs listeners of one Pod: a director's or netd's,
// an l7 Pod's l7, a gateway Pod's Envoy stats listener (and the l7
// container of a gateway Pod of v0.1.0, which held both).
func podEndpoints(pod corev1.Pod) []Endpoint {
	name := cmp.Or(pod.Spec.NodeName, pod.Name)
	at := func(port int) string { return "http://" + net.JoinHostPort(pod.Status.HostIP, strconv.Itoa(port)) }
	obs := func(def int) string { return at(cmp.Or(namedPort(pod, MetricsPortName), def)) }
	if g := pod.Labels[api.LabelGatewayGroup]; g != "" {
		name += "/" + g // one gateway of each group on a node
	}
	switch pod.Labels[LabelName] {
	case PodNameDirector:
		return []Endpoint{{Role: RoleDirector, Name: name, URL: obs(defaultDirectorObs)}}
	case PodNameNetd:
		return []Endpoint{{Role: RoleNetd, Name: name, URL: obs(defaultNetdObs)}}
	case PodNameL7:
		return []Endpoint{{Role: RoleL7, Name: name, URL: obs(defaultL7Obs)}}
	}
	// The gateway's Envoy: its stats listener on the node's IP (l7
	// bootstrap --stats-address).
	out := []Endpoint{{Role: RoleEnvoy, Name: name, URL: at(cmp.Or(namedPort(pod, EnvoyStatsPortName), defaultEnvoyStats))}}
	if slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == "l7" }) {
		out = append(out, Endpoint{Role: RoleL7, Name: name, URL: obs(defaultL7Obs)})
	}
	return out
}

// namedPort is the container port called name in pod, 0 if none.
func namedPort(pod corev1.Pod, name string) int {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return int(p.ContainerPort)
			}
		}
	}
	return 0
}
