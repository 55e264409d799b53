package envoyproc

import (
	"fmt"
	"os"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Spec is how deploy/envoy starts a gateway, read from its DaemonSet.
type Spec struct {
	// Bootstrap is the init container "bootstrap"'s command (l7 bootstrap).
	Bootstrap []string
	// Envoy is the envoy container's command.
	Envoy []string
	// PreStop is the envoy container's preStop hook (l7 drain).
	PreStop []string
	// UID and GID are the pod's user and group.
	UID, GID int64
	// EnvoyCaps are the capabilities the envoy container adds (after
	// dropping all).
	EnvoyCaps []string
}

// ReadSpec reads the gateway DaemonSets at path (deploy/envoy/gateway.yaml:
// l7's, then Envoy's).
func ReadSpec(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, err
	}
	// Two DaemonSets: l7's (with the init container bootstrap) and
	// Envoy's (container envoy).
	var pods []corev1.PodSpec
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var ds appsv1.DaemonSet
		if err := yaml.UnmarshalStrict([]byte(doc), &ds); err != nil {
			return Spec{}, fmt.Errorf("envoyproc: %s: %w", path, err)
		}
		pods = append(pods, ds.Spec.Template.Spec)
	}
	find := func(init bool, name string) (corev1.Container, *corev1.PodSpec, error) {
		for i := range pods {
			cs := pods[i].Containers
			if init {
				cs = pods[i].InitContainers
			}
			if j := slices.IndexFunc(cs, func(c corev1.Container) bool { return c.Name == name }); j >= 0 {
				return cs[j], &pods[i], nil
			}
		}
		return corev1.Container{}, nil, fmt.Errorf("envoyproc: %s has no container %q", path, name)
	}
	boot, _, err := find(true, "bootstrap")
	if err != nil {
		return Spec{}, err
	}
	envoy, pod, err := find(false, "envoy")
	if err != nil {
		return Spec{}, err
	}
	s := Spec{Bootstrap: append(boot.Command, boot.Args...), Envoy: append(envoy.Command, envoy.Args...)}
	if l := envoy.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Exec != nil {
		s.PreStop = l.PreStop.Exec.Command
	}
	if sc := pod.SecurityContext; sc != nil && sc.RunAsUser != nil && sc.RunAsGroup != nil {
		s.UID, s.GID = *sc.RunAsUser, *sc.RunAsGroup
	}
	if sc := envoy.SecurityContext; sc != nil && sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Add {
			s.EnvoyCaps = append(s.EnvoyCaps, string(c))
		}
	}
	if len(s.Bootstrap) == 0 || len(s.Envoy) == 0 || len(s.PreStop) == 0 {
		return Spec{}, fmt.Errorf("envoyproc: %s: the bootstrap command, the envoy command and the envoy preStop hook are required", path)
	}
	return s, nil
}

// rewriter maps the pod's paths and variables to a gateway of the lab:
// its own directory for the pod's volumes, the binaries of this build,
// the node's address and name, and the gateway group (GATEWAY_GROUP,
// which deploy/site gives the DaemonSet).
type rewriter struct {
	dir, l7, envoy, hostIP, node, group string
}

func (r rewriter) args(in []string) []string {
	out := make([]string, len(in))
	for i, a := range in {
		a = strings.ReplaceAll(a, "$(HOST_IP)", r.hostIP)
		a = strings.ReplaceAll(a, "$(NODE_NAME)", r.node)
		a = strings.ReplaceAll(a, "$(GATEWAY_GROUP)", r.group)
		switch a {
		case "/run/tlb/l7": // what the l7 pod installs for Envoy's preStop
			a = "/usr/local/bin/l7"
		case "/etc/envoy/bootstrap.yaml": // a file mount of what l7 bootstrap writes
			a = "/run/tlb/bootstrap.yaml"
		}
		a = strings.ReplaceAll(a, "/run/tlb/", r.dir+"/run/")
		switch a {
		case "/usr/local/bin/l7":
			a = r.l7
		case "/usr/local/bin/envoy":
			a = r.envoy
		}
		out[i] = a
	}
	return out
}
