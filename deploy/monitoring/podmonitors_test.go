package monitoring

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// podMonitor is the part of the Prometheus Operator's PodMonitor (v1) that
// podmonitors.yaml uses; unknown fields are an error (yaml.UnmarshalStrict),
// so a misspelt field fails here instead of being dropped by the operator.
type podMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		PodMetricsEndpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path"`
			Relabelings []struct {
				SourceLabels []string `json:"sourceLabels,omitempty"`
				TargetLabel  string   `json:"targetLabel,omitempty"`
				Regex        *string  `json:"regex,omitempty"`
				Replacement  *string  `json:"replacement,omitempty"`
				Action       string   `json:"action,omitempty"`
			} `json:"relabelings"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// operatorRelabels is the relabelling the Prometheus Operator generates for
// one endpoint of pm before the endpoint's own relabelings
// (generatePodMonitorConfig): keep the Pods the selector matches and the
// container port the endpoint names, then label namespace, container, pod
// and job ("namespace/name").
func operatorRelabels(pm podMonitor, port string) []relabelConfig {
	str := func(s string) *string { return &s }
	var rcs []relabelConfig
	keys := make([]string, 0, len(pm.Spec.Selector.MatchLabels))
	for k := range pm.Spec.Selector.MatchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		rcs = append(rcs, relabelConfig{
			SourceLabels: []string{"__meta_kubernetes_pod_label_" + nonLabelChar.ReplaceAllString(k, "_")},
			Regex:        str("(" + regexp.QuoteMeta(pm.Spec.Selector.MatchLabels[k]) + ")"), Action: "keep",
		})
	}
	rcs = append(rcs,
		relabelConfig{SourceLabels: []string{"__meta_kubernetes_pod_container_port_name"}, Regex: str(port), Action: "keep"},
		relabelConfig{SourceLabels: []string{"__meta_kubernetes_namespace"}, TargetLabel: "namespace"},
		relabelConfig{SourceLabels: []string{"__meta_kubernetes_pod_container_name"}, TargetLabel: "container"},
		relabelConfig{SourceLabels: []string{"__meta_kubernetes_pod_name"}, TargetLabel: "pod"},
		relabelConfig{TargetLabel: "job", Replacement: str(pm.Metadata.Namespace + "/" + pm.Metadata.Name)},
	)
	return rcs
}

// TestPodMonitorsMatchScrapeJobs: with the Prometheus Operator, each
// PodMonitor of podmonitors.yaml keeps exactly the targets the scrape.yaml
// job of the same name keeps, at the same address and path, labelled with
// the same job, node and instance (the alerts and dashboards select by
// them), in tlb-system; and kustomization.yaml ships the file.
func TestPodMonitorsMatchScrapeJobs(t *testing.T) {
	b, err := os.ReadFile("podmonitors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pods := deployedPods(t)
	var names []string
	for i, doc := range strings.Split(string(b), "\n---\n") {
		var pm podMonitor
		if err := yaml.UnmarshalStrict([]byte(doc), &pm); err != nil {
			t.Fatalf("podmonitors.yaml document %d: %v", i, err)
		}
		name := pm.Metadata.Name
		names = append(names, name)
		if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" || pm.Metadata.Namespace != "tlb-system" {
			t.Errorf("%s: %s %s in %q, want a monitoring.coreos.com/v1 PodMonitor in tlb-system", name, pm.APIVersion, pm.Kind, pm.Metadata.Namespace)
		}
		if pm.Metadata.Labels["app.kubernetes.io/part-of"] != "tlb" {
			t.Errorf("%s: labels %v, want app.kubernetes.io/part-of=tlb", name, pm.Metadata.Labels)
		}
		var got []string
		for _, ep := range pm.Spec.PodMetricsEndpoints {
			rcs := operatorRelabels(pm, ep.Port)
			for _, r := range ep.Relabelings {
				rcs = append(rcs, relabelConfig{SourceLabels: r.SourceLabels, TargetLabel: r.TargetLabel,
					Regex: r.Regex, Replacement: r.Replacement, Action: r.Action})
			}
			got = append(got, keptTargets(t, pods, name, "prometheus-operator-default", ep.Path, rcs)...)
		}
		slices.Sort(got)
		want, ok := wantTargets[name]
		if !ok {
			t.Errorf("PodMonitor %s: no scrape.yaml job of that name", name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("PodMonitor %s keeps\n  %q\nwant (as scrape.yaml's job)\n  %q", name, got, want)
		}
	}
	var jobs []string
	for j := range wantTargets {
		jobs = append(jobs, j)
	}
	slices.Sort(jobs)
	slices.Sort(names)
	if !slices.Equal(names, jobs) {
		t.Errorf("PodMonitors %v, want one per scrape job %v", names, jobs)
	}
	k, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(k), "\n  - podmonitors.yaml\n") {
		t.Error("kustomization.yaml does not list podmonitors.yaml in its resources")
	}
}
