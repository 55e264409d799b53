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
	// PodNameGateway is LabelName's value on the gateway Pods, whose l7
	// container serves the group's routes (GET /routes).
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
	sel := fmt.Sprintf("%s in (%s,%s,%s)", LabelName, PodNameDirector, PodNameNetd, PodNameGateway)
	pods, err := p.Kube.CoreV1().Pods(p.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("discover directors, netd and l7: list pods in %s (%s): %w", p.Namespace, sel, err)
	}
	var out []Endpoint
	for _, pod := range pods.Items {
		role, port := RoleDirector, defaultDirectorObs
		switch pod.Labels[LabelName] {
		case PodNameNetd:
			role, port = RoleNetd, defaultNetdObs
		case PodNameGateway:
			role, port = RoleL7, defaultL7Obs
		}
		if pod.Status.HostIP == "" || pod.DeletionTimestamp != nil {
			continue // not scheduled yet, or going away
		}
		if named := namedPort(pod, MetricsPortName); named != 0 {
			port = named
		}
		name := cmp.Or(pod.Spec.NodeName, pod.Name)
		if g := pod.Labels[api.LabelGatewayGroup]; role == RoleL7 && g != "" {
			name += "/" + g // one gateway Pod per group on a node
		}
		out = append(out, Endpoint{Role: role, Name: name,
			URL: "http://" + net.JoinHostPort(pod.Status.HostIP, strconv.Itoa(port))})
		if role == RoleL7 {
			// The gateway Pod's Envoy: its stats listener on the
			// node's IP (l7 bootstrap --stats-address).
			stats := cmp.Or(namedPort(pod, EnvoyStatsPortName), defaultEnvoyStats)
			out = append(out, Endpoint{Role: RoleEnvoy, Name: name,
				URL: "http://" + net.JoinHostPort(pod.Status.HostIP, strconv.Itoa(stats))})
		}
	}
	slices.SortFunc(out, func(a, b Endpoint) int {
		return cmp.Or(cmp.Compare(a.Role, b.Role), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
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
