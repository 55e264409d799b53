package console

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// agentPod is a director or netd Pod (label app.kubernetes.io/name=app)
// on node with hostIP, its obs port named "metrics" when port > 0.
func agentPod(ns, name, app, node, hostIP string, port int32) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{LabelName: app}},
		Spec:   corev1.PodSpec{NodeName: node, HostNetwork: true, Containers: []corev1.Container{{Name: "c"}}},
		Status: corev1.PodStatus{HostIP: hostIP}}
	if port > 0 {
		pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "other", ContainerPort: 1}, {Name: MetricsPortName, ContainerPort: port}}
	}
	return pod
}

// gatewayPod is a gateway (Envoy) Pod of group on node: its container
// declares no port, so Envoy's default stats port (9902) is read.
func gatewayPod(ns, name, node, hostIP, group string) *corev1.Pod {
	pod := agentPod(ns, name, PodNameGateway, node, hostIP, 0)
	pod.Labels[api.LabelGatewayGroup] = group
	return pod
}

// l7Pod is the l7 Pod of group on node: its container declares no port,
// so the l7 default (9480) is read.
func l7Pod(ns, name, node, hostIP, group string) *corev1.Pod {
	pod := agentPod(ns, name, PodNameL7, node, hostIP, 0)
	pod.Labels[api.LabelGatewayGroup] = group
	return pod
}

func TestPodDiscoveryEndpoints(t *testing.T) {
	kc := kubefake.NewClientset(
		agentPod("tlb-system", "tlb-director-x1", PodNameDirector, "dir-2", "198.18.1.3", 9200),
		agentPod("tlb-system", "tlb-director-x2", PodNameDirector, "dir-1", "198.18.1.2", 9100),
		// No named port: the role's default.
		agentPod("tlb-system", "tlb-netd-y1", PodNameNetd, "gw-a", "198.18.2.2", 0),
		agentPod("tlb-system", "tlb-netd-y2", PodNameNetd, "gw-b", "2001:db8::2", 9101),
		// Not scheduled yet: no host IP.
		agentPod("tlb-system", "tlb-netd-pending", PodNameNetd, "", "", 9101),
		// A gateway's l7 and Envoy Pods: l7's obs listener and Envoy's
		// stats listener, named per group.
		l7Pod("tlb-system", "tlb-l7-edge-p", "gw-a", "198.18.2.2", "edge"),
		gatewayPod("tlb-system", "tlb-gateway-edge-q", "gw-a", "198.18.2.2", "edge"),
		// Not ours, or not in the namespace.
		agentPod("tlb-system", "tlb-ipam-z", "tlb-ipam", "n1", "198.18.1.9", 9470),
		agentPod("other", "tlb-director-elsewhere", PodNameDirector, "n2", "198.18.1.8", 9100),
	)
	got, err := PodDiscovery{Kube: kc, Namespace: "tlb-system"}.Endpoints(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Endpoint{
		{Role: RoleDirector, Name: "dir-1", URL: "http://198.18.1.2:9100"},
		{Role: RoleDirector, Name: "dir-2", URL: "http://198.18.1.3:9200"},
		{Role: RoleEnvoy, Name: "gw-a/edge", URL: "http://198.18.2.2:9902"},
		{Role: RoleL7, Name: "gw-a/edge", URL: "http://198.18.2.2:9480"},
		{Role: RoleNetd, Name: "gw-a", URL: "http://198.18.2.2:9101"},
		{Role: RoleNetd, Name: "gw-b", URL: "http://[2001:db8::2]:9101"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("endpoints\n got %+v\nwant %+v", got, want)
	}
	// The console asks for the Pods by label in its namespace, with a
	// list and nothing else (its RBAC grants list and watch only).
	for _, a := range kc.Actions() {
		if a.GetVerb() != "list" || a.GetResource().Resource != "pods" || a.GetNamespace() != "tlb-system" {
			t.Errorf("unexpected call %s %s in %q", a.GetVerb(), a.GetResource().Resource, a.GetNamespace())
		}
		if l, ok := a.(k8stesting.ListAction); ok && !strings.Contains(l.GetListRestrictions().Labels.String(), PodNameDirector) {
			t.Errorf("list without the agents' label selector: %q", l.GetListRestrictions().Labels)
		}
	}
}

// TestPodDiscoveryReadsTheDiscoveredDirector: a director Pod found by its
// label is read at its host IP and named port, as a static endpoint is.
func TestPodDiscoveryReadsTheDiscoveredDirector(t *testing.T) {
	u, err := url.Parse(director(t, true, false))
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	kc := kubefake.NewClientset(agentPod("tlb-system", "tlb-director-x", PodNameDirector, "dir-1", u.Hostname(), int32(port)))
	static := Endpoint{Role: RoleL7, Name: "edge-a", URL: "http://127.0.0.1:1"}
	got := (&Collector{Components: PodDiscovery{Kube: kc, Namespace: "tlb-system", Static: []Endpoint{static}}}).Collect(context.Background()).Components
	if len(got) != 2 {
		t.Fatalf("got %d components, want the static l7, the discovered director: %+v", len(got), got)
	}
	if got[0].Name != "edge-a" || got[0].Err == "" {
		t.Errorf("static endpoint: %+v, want edge-a unreachable", got[0])
	}
	d := got[1]
	if d.Role != RoleDirector || d.Name != "dir-1" || d.URL != u.String() || d.Err != "" || !d.Ready || len(d.Sessions) != 2 {
		t.Errorf("discovered director: %+v", d)
	}
}

// TestPodDiscoveryRefused: a console whose Pod list is refused still
// reads its static endpoints and says why the rest is missing.
func TestPodDiscoveryRefused(t *testing.T) {
	kc := kubefake.NewClientset()
	kc.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`pods is forbidden: User "system:serviceaccount:tlb-system:tlb-console" cannot list resource "pods"`)
	})
	static := Endpoint{Role: RoleDirector, Name: "dir-9", URL: director(t, true, false)}
	got := (&Collector{Components: PodDiscovery{Kube: kc, Namespace: "tlb-system", Static: []Endpoint{static}}}).Collect(context.Background()).Components
	if len(got) != 2 || got[0].Name != "dir-9" || got[0].Err != "" {
		t.Fatalf("components %+v, want dir-9 read and one error", got)
	}
	if e := got[1]; e.Name != "discovery" || !strings.Contains(e.Err, "list pods in tlb-system") || !strings.Contains(e.Err, "forbidden") {
		t.Errorf("error component %+v", e)
	}
}

// TestPodDiscoveryFindsTheGatewaysEnvoy: a gateway Pod of v0.1.0 (l7
// and Envoy in one Pod) gives its l7 and its Envoy's stats listener, at
// the container port deploy/envoy names "stats" in the Envoy container.
func TestPodDiscoveryFindsTheGatewaysEnvoy(t *testing.T) {
	pod := gatewayPod("tlb-system", "tlb-gateway-edge-q", "gw-a", "198.18.2.2", "edge")
	pod.Spec.Containers[0].Name = "l7"
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "envoy",
		Ports: []corev1.ContainerPort{{Name: EnvoyStatsPortName, ContainerPort: 9912}}})
	got, err := PodDiscovery{Kube: kubefake.NewClientset(pod), Namespace: "tlb-system"}.Endpoints(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Endpoint{
		{Role: RoleEnvoy, Name: "gw-a/edge", URL: "http://198.18.2.2:9912"},
		{Role: RoleL7, Name: "gw-a/edge", URL: "http://198.18.2.2:9480"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("endpoints\n got %+v\nwant %+v", got, want)
	}
}
