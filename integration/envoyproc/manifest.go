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

// ReadSpec reads the gateway DaemonSet at path (deploy/envoy/gateway.yaml).
func ReadSpec(path string) (Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, err
	}
	var ds appsv1.DaemonSet
	if err := yaml.UnmarshalStrict(b, &ds); err != nil {
		return Spec{}, fmt.Errorf("envoyproc: %s: %w", path, err)
	}
	pod := ds.Spec.Template.Spec
	find := func(cs []corev1.Container, name string) (corev1.Container, error) {
		i := slices.IndexFunc(cs, func(c corev1.Container) bool { return c.Name == name })
		if i < 0 {
			return corev1.Container{}, fmt.Errorf("envoyproc: %s has no container %q", path, name)
		}
		return cs[i], nil
	}
	boot, err := find(pod.InitContainers, "bootstrap")
	if err != nil {
		return Spec{}, err
	}
	envoy, err := find(pod.Containers, "envoy")
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
		a = strings.ReplaceAll(a, "/run/tlb/", r.dir+"/run/")
		a = strings.ReplaceAll(a, "/etc/envoy/", r.dir+"/etc/")
		switch a {
		case "/usr/local/bin/l7", "/tlb-bin/l7":
			a = r.l7
		case "/usr/local/bin/envoy":
			a = r.envoy
		}
		out[i] = a
	}
	return out
}
