package ratelimitconfig_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// l7Flags returns the flags of the container named l7 in the first
// document of a deploy/ manifest, as name -> value.
func l7Flags(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(b), "\n---\n")
	var obj struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name    string   `json:"name"`
						Command []string `json:"command"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, c := range obj.Spec.Template.Spec.Containers {
		if c.Name != "l7" {
			continue
		}
		flags := map[string]string{}
		for _, a := range c.Command {
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
				flags[k] = v
			} else if strings.HasPrefix(a, "--") {
				flags[a] = "true" // a bool flag
			}
		}
		return flags
	}
	t.Fatalf("%s: no l7 container", file)
	return nil
}

// TestDeployRateLimitConfigMatchesGateways: the l7 beside the rate limit
// service resolves the group as the gateways' l7 does (same group, DSL,
// namespaces, rate limit service), so the limits it serves are those of
// the routes the gateways serve. Issue 22: it serves them on a unix socket
// the service dials (main used a loopback TCP port), and holds no secret:
// --keyless, no Secret volume besides its Redis credentials, a
// ServiceAccount of its own (main mounted the TLS Secret into a full l7).
func TestDeployRateLimitConfigMatchesGateways(t *testing.T) {
	gw := l7Flags(t, "../../deploy/envoy/gateway.yaml")
	rl := l7Flags(t, "../../deploy/envoy/ratelimit.yaml")
	for _, k := range []string{"--group", "--config", "--in-cluster", "--namespaces", "--catch-all-namespaces", "--cert-dir", "--ratelimit-address"} {
		if gw[k] != rl[k] {
			t.Errorf("%s: gateways %q, rate limit service's l7 %q", k, gw[k], rl[k])
		}
	}
	if gw["--ratelimit-address"] == "" {
		t.Error("the gateways have no --ratelimit-address")
	}
	for _, k := range []string{"--authz-listen", "--authz-redis", "--authz-redis-user", "--authz-redis-password-file"} {
		if gw[k] == "" {
			t.Errorf("the gateways' l7 has no %s", k)
		}
	}
	if rl["--keyless"] != "true" || rl["--authz-listen"] != "" {
		t.Errorf("the rate limit service's l7 must be --keyless and serve no authorization: %v", rl)
	}
	pod := podOf(t, "../../deploy/envoy/ratelimit.yaml")
	sock, ok := strings.CutPrefix(rl["--ratelimit-xds-listen"], "unix://")
	if !ok {
		t.Fatalf("--ratelimit-xds-listen = %q, want a unix socket", rl["--ratelimit-xds-listen"])
	}
	if got := pod.env("ratelimit", "CONFIG_GRPC_XDS_SERVER_URL"); got != "unix://"+sock {
		t.Errorf("CONFIG_GRPC_XDS_SERVER_URL = %q, want unix://%s", got, sock)
	}
	for _, c := range []string{"l7", "ratelimit"} {
		if !pod.mounts(c, "tlb-run", filepath.Dir(sock)) {
			t.Errorf("container %s does not mount the socket's volume at %s", c, filepath.Dir(sock))
		}
	}
	if pod.Spec.ServiceAccountName == "tlb-l7" {
		t.Error("the rate limit pod runs as tlb-l7, which may read Secrets")
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil {
			t.Errorf("volume %s mounts Secret %s into the rate limit pod", v.Name, v.Secret.SecretName)
		}
	}
	if got := pod.env("ratelimit", "CACHE_KEY_PREFIX"); got != "ratelimit:" {
		t.Errorf("CACHE_KEY_PREFIX = %q: its Redis user may only touch ratelimit:*", got)
	}
	if got := pod.env("ratelimit", "REDIS_AUTH"); !strings.HasPrefix(got, "tlb-ratelimit:") {
		t.Errorf("REDIS_AUTH = %q, want the ACL user tlb-ratelimit", got)
	}
}

// deployPod is the pod template of a Deployment or DaemonSet manifest.
type deployPod struct {
	Spec corev1.PodSpec
}

// podOf reads the pod template of the first document of file.
func podOf(t *testing.T, file string) deployPod {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(b), "\n---\n")
	var obj struct {
		Spec struct {
			Template struct {
				Spec corev1.PodSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return deployPod{Spec: obj.Spec.Template.Spec}
}

func (p deployPod) container(name string) corev1.Container {
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	return corev1.Container{}
}

func (p deployPod) env(container, name string) string {
	for _, e := range p.container(container).Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func (p deployPod) mounts(container, volume, path string) bool {
	for _, m := range p.container(container).VolumeMounts {
		if m.Name == volume && m.MountPath == path {
			return true
		}
	}
	return false
}
