//go:build k8s

package k8s

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestIPAMManifestHardening: in every build under deploy/ that runs the
// ipam controller, its container has a readiness probe on /readyz and a
// liveness probe on /healthz, both on the port --metrics-addr listens on;
// it drops every capability and adds none; its replicas prefer different
// nodes; and a PodDisruptionBudget of the same build selects its pods and
// lets at most one of them go at a time.
func TestIPAMManifestHardening(t *testing.T) {
	found := 0
	for _, b := range buildDeploy(t) {
		var dep *appsv1.Deployment
		var pdbs []*policyv1.PodDisruptionBudget
		for _, o := range b.objs {
			switch {
			case o.GetKind() == "Deployment" && o.GetName() == "tlb-ipam":
				dep = &appsv1.Deployment{}
				decode(t, o, dep)
			case o.GetKind() == "PodDisruptionBudget":
				p := &policyv1.PodDisruptionBudget{}
				decode(t, o, p)
				pdbs = append(pdbs, p)
			}
		}
		if dep == nil {
			continue
		}
		found++
		t.Run(b.dir, func(t *testing.T) {
			pod := dep.Spec.Template
			for _, c := range pod.Spec.Containers {
				port := metricsPort(t, c.Args)
				for _, p := range []struct {
					name, path string
					probe      *corev1.Probe
				}{{"readinessProbe", "/readyz", c.ReadinessProbe}, {"livenessProbe", "/healthz", c.LivenessProbe}} {
					if p.probe == nil || p.probe.HTTPGet == nil {
						t.Errorf("container %s: no %s (httpGet %s)", c.Name, p.name, p.path)
						continue
					}
					if got := p.probe.HTTPGet; got.Path != p.path || !portIs(c, got.Port.String(), port) {
						t.Errorf("container %s: %s is GET %s on port %s, want %s on %s (--metrics-addr)", c.Name, p.name, got.Path, got.Port.String(), p.path, port)
					}
				}
				sc := c.SecurityContext
				if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) != 0 {
					t.Errorf("container %s: securityContext.capabilities = %+v, want drop [ALL], add none", c.Name, sc)
				}
				if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
					t.Errorf("container %s: allowPrivilegeEscalation is not false", c.Name)
				}
			}
			antiAffinity := false
			if a := pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
				for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
					antiAffinity = antiAffinity || w.PodAffinityTerm.TopologyKey == "kubernetes.io/hostname" && selects(t, w.PodAffinityTerm.LabelSelector, pod.Labels)
				}
				for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
					antiAffinity = antiAffinity || term.TopologyKey == "kubernetes.io/hostname" && selects(t, term.LabelSelector, pod.Labels)
				}
			}
			if !antiAffinity {
				t.Errorf("Deployment tlb-ipam: no pod anti-affinity on kubernetes.io/hostname selecting its own pods (%v)", pod.Labels)
			}
			var covering []string
			for _, p := range pdbs {
				if p.Namespace == dep.Namespace && selects(t, p.Spec.Selector, pod.Labels) {
					covering = append(covering, p.Name)
					if p.Spec.MaxUnavailable == nil || p.Spec.MaxUnavailable.IntValue() != 1 {
						t.Errorf("PodDisruptionBudget %s: maxUnavailable %v, want 1 of %d replicas", p.Name, p.Spec.MaxUnavailable, *dep.Spec.Replicas)
					}
				}
			}
			if len(covering) != 1 {
				t.Errorf("PodDisruptionBudgets selecting the ipam pods in %s: %v, want one", dep.Namespace, covering)
			}
		})
	}
	if found < 2 {
		t.Fatalf("Deployment tlb-ipam in %d builds, want deploy/ipam and deploy/", found)
	}
}

func decode(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatalf("decode %s: %v", objectKey(o), err)
	}
}

func selects(t *testing.T, sel *metav1.LabelSelector, l map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("label selector %v: %v", sel, err)
	}
	return !s.Empty() && s.Matches(labels.Set(l))
}

// metricsPort returns the port of --metrics-addr in args.
func metricsPort(t *testing.T, args []string) string {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--metrics-addr="); ok {
			return v[strings.LastIndex(v, ":")+1:]
		}
	}
	t.Fatalf("no --metrics-addr in %v", args)
	return ""
}

// portIs reports whether a probe port (a number or a port name of c) is
// the port number want.
func portIs(c corev1.Container, probePort, want string) bool {
	if probePort == want {
		return true
	}
	for _, p := range c.Ports {
		if p.Name == probePort && strconv.Itoa(int(p.ContainerPort)) == want {
			return true
		}
	}
	return false
}
