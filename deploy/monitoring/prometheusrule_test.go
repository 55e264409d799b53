package monitoring

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite prometheusrule.yaml from rules.yaml")

const generatedHeader = `# Generated from rules.yaml by
#   go test ./deploy/monitoring -run TestPrometheusRule -update
# Do not edit: change rules.yaml (promtool reads that one) and regenerate.
`

// prometheusRule wraps the groups of rules.yaml, unchanged, in a
// PrometheusRule of the Prometheus Operator.
func prometheusRule(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var plain map[string]any
	if err := yaml.Unmarshal(b, &plain); err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{
			"name":      "tlb",
			"namespace": "tlb-system",
			"labels":    map[string]any{"app.kubernetes.io/part-of": "tlb"},
		},
		"spec": map[string]any{"groups": plain["groups"]},
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(generatedHeader), out...)
}

// TestPrometheusRuleMatchesRules: the PrometheusRule deployed to clusters
// and the rules promtool tests are one set of rules.
func TestPrometheusRuleMatchesRules(t *testing.T) {
	want := prometheusRule(t)
	if *update {
		if err := os.WriteFile("prometheusrule.yaml", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("prometheusrule.yaml differs from rules.yaml; run: go test ./deploy/monitoring -run TestPrometheusRule -update")
	}
}

// TestEveryAlertHasARunbook: each alert required by issue 13 exists, has a
// severity, a summary, and a runbook_url pointing at a section of
// docs/monitoring.md that exists.
func TestEveryAlertHasARunbook(t *testing.T) {
	doc, err := os.ReadFile("../../docs/monitoring.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#{2,4} (.+)$`).FindAllStringSubmatch(string(doc), -1) {
		anchors[githubAnchor(m[1])] = true
	}
	const base = "https://github.com/tlbproject/tlb/blob/main/docs/monitoring.md#"
	seen := map[string]bool{}
	for _, r := range alertRules(t) {
		seen[r.Alert] = true
		if s := r.Labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: summary and description are required", r.Alert)
		}
		url := r.Annotations["runbook_url"]
		anchor, ok := strings.CutPrefix(url, base)
		if !ok || anchor != strings.ToLower(r.Alert) {
			t.Errorf("%s: runbook_url %q, want %s%s", r.Alert, url, base, strings.ToLower(r.Alert))
		}
		if !anchors[anchor] {
			t.Errorf("%s: docs/monitoring.md has no section #%s", r.Alert, anchor)
		}
	}
	for _, a := range []string{"TLBBGPSessionDown", "TLBVIPDown", "TLBDirectorNotReady", "TLBConfigRejected",
		"TLBVIPPoolNearlyFull", "TLBCertificateExpiringSoon", "TLBXDSNACK"} {
		if !seen[a] {
			t.Errorf("alert %s is missing", a)
		}
	}
}

// githubAnchor is the fragment GitHub gives a Markdown heading.
func githubAnchor(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}
