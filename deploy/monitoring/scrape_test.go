package monitoring

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// scrapeConfig is the part of prometheus.yml scrape.yaml uses; unknown
// fields are an error (yaml.UnmarshalStrict).
type scrapeConfig struct {
	ScrapeConfigs []scrapeJob `json:"scrape_configs"`
}

type scrapeJob struct {
	JobName             string `json:"job_name"`
	MetricsPath         string `json:"metrics_path,omitempty"`
	KubernetesSDConfigs []struct {
		Role       string `json:"role"`
		Namespaces struct {
			Names []string `json:"names"`
		} `json:"namespaces"`
	} `json:"kubernetes_sd_configs"`
	RelabelConfigs []relabelConfig `json:"relabel_configs"`
}

type relabelConfig struct {
	SourceLabels []string `json:"source_labels,omitempty"`
	Separator    *string  `json:"separator,omitempty"`
	Regex        *string  `json:"regex,omitempty"`
	TargetLabel  string   `json:"target_label,omitempty"`
	Replacement  *string  `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// relabel applies rc to labels as Prometheus does for the actions
// scrape.yaml uses (replace, keep, drop); false when the target is dropped.
func relabel(t *testing.T, labels map[string]string, rcs []relabelConfig) bool {
	t.Helper()
	for _, rc := range rcs {
		sep, re, repl := ";", "(.*)", "$1"
		if rc.Separator != nil {
			sep = *rc.Separator
		}
		if rc.Regex != nil {
			re = *rc.Regex
		}
		if rc.Replacement != nil {
			repl = *rc.Replacement
		}
		rx := regexp.MustCompile("^(?:" + re + ")$")
		vals := make([]string, len(rc.SourceLabels))
		for i, l := range rc.SourceLabels {
			vals[i] = labels[l]
		}
		val := strings.Join(vals, sep)
		switch cmpOr(rc.Action, "replace") {
		case "keep":
			if !rx.MatchString(val) {
				return false
			}
		case "drop":
			if rx.MatchString(val) {
				return false
			}
		case "replace":
			m := rx.FindStringSubmatchIndex(val)
			if m == nil {
				continue
			}
			out := string(rx.ExpandString(nil, repl, val, m))
			if out == "" {
				delete(labels, rc.TargetLabel)
			} else {
				labels[rc.TargetLabel] = out
			}
		default:
			t.Fatalf("relabel action %q: not one this test knows", rc.Action)
		}
	}
	return true
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

var nonLabelChar = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// podTargets are the targets Prometheus's pod discovery makes of one Pod
// of tmpl in namespace ns on node with nodeIP (its pod IP when on the host
// network, podIP otherwise): one per declared container port, one per
// container without ports.
func podTargets(ns, name string, tmpl corev1.PodTemplateSpec, node, nodeIP, podIP string) []map[string]string {
	if tmpl.Spec.HostNetwork {
		podIP = nodeIP
	}
	base := map[string]string{
		"__meta_kubernetes_namespace": ns, "__meta_kubernetes_pod_name": name, "__meta_kubernetes_pod_ip": podIP,
		"__meta_kubernetes_pod_node_name": node, "__meta_kubernetes_pod_host_ip": nodeIP,
		"__metrics_path__": "/metrics", "__scheme__": "http",
	}
	for k, v := range tmpl.Labels {
		base["__meta_kubernetes_pod_label_"+nonLabelChar.ReplaceAllString(k, "_")] = v
	}
	var out []map[string]string
	for _, c := range tmpl.Spec.Containers {
		if len(c.Ports) == 0 {
			t := clone(base)
			t["__address__"], t["__meta_kubernetes_pod_container_name"] = podIP, c.Name
			out = append(out, t)
		}
		for _, p := range c.Ports {
			t := clone(base)
			t["__address__"] = net.JoinHostPort(podIP, strconv.Itoa(int(p.ContainerPort)))
			t["__meta_kubernetes_pod_container_name"] = c.Name
			t["__meta_kubernetes_pod_container_port_name"] = p.Name
			t["__meta_kubernetes_pod_container_port_number"] = strconv.Itoa(int(p.ContainerPort))
			out = append(out, t)
		}
	}
	return out
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// deployedPods reads the pod templates of deploy/'s workloads, with the
// namespace each lands in (its own, or its kustomization's).
func deployedPods(t *testing.T) map[string]corev1.PodTemplateSpec {
	t.Helper()
	out := map[string]corev1.PodTemplateSpec{}
	for _, f := range []string{"director/daemonset.yaml", "netd/daemonset.yaml", "ipam/deployment.yaml", "envoy/gateway.yaml",
		"envoy/ratelimit.yaml", "envoy/redis.yaml", "console/deployment.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var head struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("deploy/%s: %v", f, err)
			}
			switch head.Kind {
			case "DaemonSet":
				var ds appsv1.DaemonSet
				if err := yaml.Unmarshal([]byte(doc), &ds); err != nil {
					t.Fatalf("deploy/%s: %v", f, err)
				}
				out[head.Metadata.Name] = ds.Spec.Template
			case "Deployment":
				var d appsv1.Deployment
				if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
					t.Fatalf("deploy/%s: %v", f, err)
				}
				out[head.Metadata.Name] = d.Spec.Template
			}
		}
	}
	return out
}

// The address every test Pod gets: the node's name and IP (a host-network
// Pod's IP) and another Pod's IP.
const testNode, testNodeIP, testPodIP = "node-1", "198.18.1.2", "10.244.1.7"

// wantTargets are, per job, the targets it must keep of deploy/'s Pods
// (as keptTargets prints them).
var wantTargets = map[string][]string{
	"tlb-director": {"tlb-director 198.18.1.2:9100 /metrics instance=node-1"},
	"tlb-netd":     {"tlb-netd 198.18.1.2:9101 /metrics instance=node-1"},
	"tlb-ipam":     {"tlb-ipam 10.244.1.7:9470 /metrics instance="},
	"tlb-l7":       {"tlb-gateway-default 198.18.1.2:9480 /metrics instance=node-1"},
	"tlb-gateway":  {"tlb-gateway-default 198.18.1.2:9902 /stats/prometheus instance=node-1"},
}

// keptTargets relabels, as Prometheus does, the targets pod discovery makes
// of every Pod of pods in tlb-system and returns the ones rcs keep as
// "pod address path instance=...", sorted; each must be labelled with its
// pod (and its node, on the host network) and, after the relabelling, with
// job. A target starts labelled job=startJob (Prometheus's job name, or
// what the Prometheus Operator sets before a PodMonitor's relabelings).
func keptTargets(t *testing.T, pods map[string]corev1.PodTemplateSpec, job, startJob, metricsPath string, rcs []relabelConfig) []string {
	t.Helper()
	var got []string
	for name, tmpl := range pods {
		for _, tg := range podTargets("tlb-system", name, tmpl, testNode, testNodeIP, testPodIP) {
			tg["job"] = startJob
			if metricsPath != "" {
				tg["__metrics_path__"] = metricsPath
			}
			if !relabel(t, tg, rcs) {
				continue
			}
			if tg["pod"] != name || (tmpl.Spec.HostNetwork && tg["node"] != testNode) || tg["job"] != job {
				t.Errorf("job %s: target of %s labelled pod=%q node=%q job=%q", job, name, tg["pod"], tg["node"], tg["job"])
			}
			got = append(got, fmt.Sprintf("%s %s %s instance=%s", name, tg["__address__"], tg["__metrics_path__"], tg["instance"]))
		}
	}
	slices.Sort(got)
	return got
}

// TestScrapeConfigSelectsOurPods: each job of scrape.yaml, relabelled as
// Prometheus does over the targets its pod discovery makes of every
// workload deploy/ declares, keeps exactly the Pods of its component, at
// the address and port their obs listener serves (the container port
// named metrics; Envoy's stats listener for tlb-gateway), and promtool
// accepts the file.
func TestScrapeConfigSelectsOurPods(t *testing.T) {
	b, err := os.ReadFile("scrape.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg scrapeConfig
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		t.Fatalf("scrape.yaml: %v", err)
	}
	pods := deployedPods(t)
	var jobs []string
	for _, job := range cfg.ScrapeConfigs {
		jobs = append(jobs, job.JobName)
		if len(job.KubernetesSDConfigs) != 1 || job.KubernetesSDConfigs[0].Role != "pod" ||
			!slices.Equal(job.KubernetesSDConfigs[0].Namespaces.Names, []string{"tlb-system"}) {
			t.Errorf("job %s: kubernetes_sd_configs %+v, want one, role pod, namespace tlb-system", job.JobName, job.KubernetesSDConfigs)
		}
		got := keptTargets(t, pods, job.JobName, job.JobName, job.MetricsPath, job.RelabelConfigs)
		if !slices.Equal(got, wantTargets[job.JobName]) {
			t.Errorf("job %s keeps\n  %q\nwant\n  %q", job.JobName, got, wantTargets[job.JobName])
		}
	}
	if !slices.Equal(jobs, []string{"tlb-director", "tlb-netd", "tlb-ipam", "tlb-l7", "tlb-gateway"}) {
		t.Errorf("jobs %v", jobs)
	}

	// Debian's promtool is built without Kubernetes discovery, so it reads
	// a copy with static_configs in place of kubernetes_sd_configs: the
	// rest (relabel rules and regexes, paths) is checked as Prometheus
	// loads it.
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: tools/deps.sh installs Debian's prometheus package")
	}
	sd := regexp.MustCompile(`(?m)^    kubernetes_sd_configs:\n      - role: pod\n        namespaces: \{names: \[tlb-system\]\}\n`)
	if n := len(sd.FindAllIndex(b, -1)); n != len(cfg.ScrapeConfigs) {
		t.Fatalf("scrape.yaml: %d kubernetes_sd_configs blocks in the expected form, want %d", n, len(cfg.ScrapeConfigs))
	}
	static := sd.ReplaceAll(b, []byte("    static_configs: [{targets: ['198.18.1.2:9100']}]\n"))
	path := filepath.Join(t.TempDir(), "prometheus.yml")
	if err := os.WriteFile(path, static, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "config", path).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}
