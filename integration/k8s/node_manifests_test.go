//go:build k8s

package k8s

import (
	"net"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	netdconfig "github.com/tlbproject/tlb/netd/config"
	tlbconfig "github.com/tlbproject/tlb/tlb/config"
)

// nodeAgent is a DaemonSet on the data path and how its binary finds the
// address of its obs listener (/healthz, /readyz) in its config file.
type nodeAgent struct {
	name string
	// metricsAddress parses the config file with the binary's own parser
	// (defaults applied) and returns its metrics address.
	metricsAddress func(file string, data []byte) (string, error)
}

var nodeAgents = []nodeAgent{
	{name: "tlb-director", metricsAddress: func(file string, data []byte) (string, error) {
		c, err := tlbconfig.ParseSettings(file, data)
		if err != nil {
			return "", err
		}
		return c.Director.MetricsAddress, nil
	}},
	{name: "tlb-netd", metricsAddress: func(_ string, data []byte) (string, error) {
		c, err := netdconfig.Parse(data)
		return c.MetricsAddress, err
	}},
}

// TestNodeAgentManifestHardening: in every build under deploy/ that runs
// the director or netd, the DaemonSet is system-node-critical and each of
// its containers has a liveness probe on /healthz and a readiness probe on
// /readyz at the host and port where the binary's obs listener listens
// (metricsAddress of the file it is given with --config, read from the
// ConfigMap of the same build, its host replaced by --metrics-host); that
// listener is on the node's IP from the downward API (status.hostIP), not
// on a wildcard nor on loopback, so the console and an in-cluster
// Prometheus reach it, and its port is declared as the container port
// named "metrics" that they find it by; it drops every capability and
// adds NET_ADMIN alone (no NET_RAW: nothing opens a raw socket).
func TestNodeAgentManifestHardening(t *testing.T) {
	builds := buildDeploy(t)
	for _, agent := range nodeAgents {
		found := 0
		for _, b := range builds {
			var ds *appsv1.DaemonSet
			for _, o := range b.objs {
				if o.GetKind() == "DaemonSet" && o.GetName() == agent.name {
					ds = &appsv1.DaemonSet{}
					decode(t, o, ds)
				}
			}
			if ds == nil {
				continue
			}
			found++
			t.Run(agent.name+"/"+b.dir, func(t *testing.T) {
				pod := ds.Spec.Template.Spec
				if pod.PriorityClassName != "system-node-critical" {
					t.Errorf("priorityClassName = %q, want system-node-critical", pod.PriorityClassName)
				}
				if len(pod.Containers) == 0 {
					t.Fatal("no containers")
				}
				for _, c := range pod.Containers {
					host, port := obsAddress(t, agent, b.objs, pod, c)
					if host != nodeIP {
						t.Errorf("container %s: obs listener on %q, want the node's IP (--metrics-host=$(VAR), VAR from status.hostIP)", c.Name, host)
					}
					if !portIs(c, "metrics", port) {
						t.Errorf("container %s: no container port named metrics = %s (metricsAddress's port): %+v", c.Name, port, c.Ports)
					}
					checkProbes(t, c, pod.HostNetwork, host, port)
					sc := c.SecurityContext
					if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") ||
						!slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_ADMIN"}) {
						t.Errorf("container %s: securityContext.capabilities = %+v, want drop [ALL], add [NET_ADMIN]", c.Name, sc)
					}
				}
			})
		}
		if found < 2 {
			t.Errorf("DaemonSet %s in %d builds, want its own directory and deploy/", agent.name, found)
		}
	}
}

// checkProbes checks that c's startup, liveness and readiness probes GET
// /healthz, /healthz and /readyz where the obs listener listens (host,
// port), and that the startup probe allows minutes: a node agent that
// waits for a slow API server must not be killed by its liveness probe
// before it serves.
func checkProbes(t *testing.T, c corev1.Container, hostNetwork bool, host, port string) {
	t.Helper()
	// With host networking the kubelet's probe goes to the node's IP unless
	// it names a host; a listener on loopback needs host: 127.0.0.1. A
	// wildcard listener answers on any address.
	wantHost := host
	if host == nodeIP && !hostNetwork {
		t.Errorf("container %s: obs listener on the node's IP but the pod has its own network namespace", c.Name)
	}
	if ip := net.ParseIP(host); host == "" || host == nodeIP || ip != nil && ip.IsUnspecified() {
		wantHost = ""
	} else if !hostNetwork {
		t.Errorf("container %s: obs listener on %s but the pod has its own network namespace: the kubelet cannot reach it", c.Name, host)
	}
	for _, p := range []struct {
		name, path string
		probe      *corev1.Probe
	}{{"startupProbe", "/healthz", c.StartupProbe}, {"livenessProbe", "/healthz", c.LivenessProbe}, {"readinessProbe", "/readyz", c.ReadinessProbe}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("container %s: no %s (httpGet %s)", c.Name, p.name, p.path)
			continue
		}
		got := p.probe.HTTPGet
		if got.Path != p.path || !portIs(c, got.Port.String(), port) || got.Host != wantHost && wantHost != "" {
			t.Errorf("container %s: %s is GET %s on %s:%s, want %s on %s:%s (metricsAddress)",
				c.Name, p.name, got.Path, got.Host, got.Port.String(), p.path, wantHost, port)
		}
	}
	if s := c.StartupProbe; s != nil {
		if budget := time.Duration(s.PeriodSeconds*s.FailureThreshold) * time.Second; budget < 3*time.Minute {
			t.Errorf("container %s: the startup probe gives %s to start; want at least 3m", c.Name, budget)
		}
	}
	if l := c.LivenessProbe; l != nil && l.InitialDelaySeconds != 0 {
		t.Errorf("container %s: livenessProbe.initialDelaySeconds %d; the startup probe covers the start", c.Name, l.InitialDelaySeconds)
	}
}

// nodeIP stands for the host of an obs listener given by --metrics-host
// from the downward API's status.hostIP.
const nodeIP = "(status.hostIP)"

// obsAddress returns the host and port of the metrics address in the
// config file that container c is given (--config=PATH), found in the
// ConfigMap mounted at PATH's directory in the same build. With
// --metrics-host=$(VAR) the host is VAR's value: nodeIP when VAR comes
// from status.hostIP.
func obsAddress(t *testing.T, agent nodeAgent, objs []*unstructured.Unstructured, pod corev1.PodSpec, c corev1.Container) (string, string) {
	t.Helper()
	var file, metricsHost string
	for _, a := range append(slices.Clone(c.Command), c.Args...) {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			file = v
		}
		if v, ok := strings.CutPrefix(a, "--metrics-host="); ok {
			metricsHost = envValue(c, v)
		}
	}
	if file == "" {
		t.Fatalf("container %s: no --config= in %v %v", c.Name, c.Command, c.Args)
	}
	var volume string
	for _, m := range c.VolumeMounts {
		if path.Dir(file) == path.Clean(m.MountPath) {
			volume = m.Name
		}
	}
	var cmName string
	for _, v := range pod.Volumes {
		if v.Name == volume && v.ConfigMap != nil {
			cmName = v.ConfigMap.Name
		}
	}
	if cmName == "" {
		t.Fatalf("container %s: no ConfigMap volume mounted at %s", c.Name, path.Dir(file))
	}
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" || o.GetName() != cmName {
			continue
		}
		data, ok, _ := unstructured.NestedString(o.Object, "data", path.Base(file))
		if !ok {
			t.Fatalf("ConfigMap %s: no key %s", cmName, path.Base(file))
		}
		addr, err := agent.metricsAddress(file, []byte(data))
		if err != nil {
			t.Fatalf("ConfigMap %s: %s: %v", cmName, path.Base(file), err)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("ConfigMap %s: metrics address %q: %v", cmName, addr, err)
		}
		if metricsHost != "" {
			host = metricsHost
		}
		return host, port
	}
	t.Fatalf("ConfigMap %s (mounted by container %s) not in the build", cmName, c.Name)
	return "", ""
}

// envValue expands v when it is $(VAR): nodeIP when VAR is set from
// status.hostIP, VAR's literal value otherwise; v itself when not a
// reference.
func envValue(c corev1.Container, v string) string {
	name, ok := strings.CutPrefix(v, "$(")
	if !ok || !strings.HasSuffix(name, ")") {
		return v
	}
	name = strings.TrimSuffix(name, ")")
	for _, e := range c.Env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.hostIP" {
			return nodeIP
		}
		return e.Value
	}
	return v
}
