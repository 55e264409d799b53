package monitoring

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// repoRoot is the module root, two levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	return root
}

// optsKinds maps the prometheus option types to the series suffixes their
// metrics are exposed with.
var optsKinds = map[string][]string{
	"CounterOpts":   {""},
	"GaugeOpts":     {""},
	"HistogramOpts": {"_bucket", "_sum", "_count"},
	"SummaryOpts":   {"", "_sum", "_count"},
}

// registeredNames parses every non-test Go file of the module and returns
// the series names our code can expose: the Name of every
// prometheus.*Opts literal and the name given to every prometheus.NewDesc,
// with the suffixes histograms and summaries add.
func registeredNames(t *testing.T) map[string]string {
	t.Helper()
	names := map[string]string{} // series name -> file that declares it
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CompositeLit:
				sel, ok := x.Type.(*ast.SelectorExpr)
				if !ok || !isPkg(sel.X, "prometheus") || optsKinds[sel.Sel.Name] == nil {
					return true
				}
				for _, el := range x.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					key := kv.Key.(*ast.Ident).Name
					if key == "Namespace" || key == "Subsystem" {
						t.Errorf("%s: %s in prometheus.%s: this test reads Name alone", rel, key, sel.Sel.Name)
					}
					if key == "Name" {
						name := stringLit(t, rel, kv.Value)
						for _, suffix := range optsKinds[sel.Sel.Name] {
							names[name+suffix] = rel
						}
					}
				}
			case *ast.CallExpr:
				sel, ok := x.Fun.(*ast.SelectorExpr)
				if ok && isPkg(sel.X, "prometheus") && sel.Sel.Name == "NewDesc" {
					names[stringLit(t, rel, x.Args[0])] = rel
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func isPkg(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func stringLit(t *testing.T, file string, e ast.Expr) string {
	t.Helper()
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		t.Errorf("%s: a metric name that is not a string literal; this test cannot read it", file)
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	reString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	reSelector = regexp.MustCompile(`\{[^}]*\}`)
	reRange    = regexp.MustCompile(`\[[^\]]*\]`)
	reGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	reIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	keywords   = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"inf": true, "nan": true}
	reLabelValues = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)[^)]*\)`)
)

// metricNames returns the metric names a PromQL expression (or a
// Grafana variable's label_values query) selects: identifiers left once
// strings, label matchers, ranges and grouping clauses are removed, that
// are neither keywords nor function calls.
func metricNames(expr string) []string {
	var out []string
	for _, m := range reLabelValues.FindAllStringSubmatch(expr, -1) {
		out = append(out, m[1])
	}
	expr = reLabelValues.ReplaceAllString(expr, " ")
	for _, re := range []*regexp.Regexp{reString, reSelector, reRange, reGrouping} {
		expr = re.ReplaceAllString(expr, " ")
	}
	for _, loc := range reIdent.FindAllStringIndex(expr, -1) {
		id := expr[loc[0]:loc[1]]
		rest := strings.TrimSpace(expr[loc[1]:])
		if keywords[strings.ToLower(id)] || strings.HasPrefix(rest, "(") {
			continue
		}
		if loc[0] > 0 && (expr[loc[0]-1] == '$' || expr[loc[0]-1] == '.' || (expr[loc[0]-1] >= '0' && expr[loc[0]-1] <= '9')) {
			continue // a Grafana variable, or part of a number (1e3)
		}
		out = append(out, id)
	}
	return out
}

func TestMetricNamesOfExpressions(t *testing.T) {
	cases := map[string][]string{
		`sum by (vip, port) (rate(tlb_a_total{vip=~"$vip"}[$__rate_interval]))`: {"tlb_a_total"},
		`max by (pool) (a) / max by (pool) (a + b) > 0.9`:                       {"a", "a", "b"},
		`increase(x_total[10m]) > 0 or y == 0`:                                  {"x_total", "y"},
		`histogram_quantile(0.99, sum by (le) (rate(h_bucket[5m])))`:            {"h_bucket"},
		`time() - ts_seconds`:                   {"ts_seconds"},
		`label_values(tlb_conn_total, vip)`:     {"tlb_conn_total"},
		`8 * rate(b{x="a or b"}[1m]) offset 1h`: {"b"},
	}
	for expr, want := range cases {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %v, want %v", expr, got, want)
		}
	}
}

// usedNames maps each metric name the dashboards and rules use to where.
func usedNames(t *testing.T) map[string][]string {
	t.Helper()
	used := map[string][]string{}
	add := func(where, expr string) {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: %q selects no metric", where, expr)
		}
		for _, n := range names {
			used[n] = append(used[n], where)
		}
	}
	for _, r := range alertRules(t) {
		add("rules.yaml "+r.Alert, r.Expr)
	}
	files, _ := filepath.Glob(filepath.Join("dashboards", "*.json"))
	if len(files) == 0 {
		t.Fatal("no dashboards")
	}
	for _, f := range files {
		var d map[string]any
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		walkJSON(d, func(key string, v any) {
			if s, ok := v.(string); ok && (key == "expr" || key == "definition") {
				add(f, s)
			}
		})
	}
	return used
}

func walkJSON(v any, fn func(key string, v any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			fn(k, e)
			walkJSON(e, fn)
		}
	case []any:
		for _, e := range x {
			walkJSON(e, fn)
		}
	}
}

// TestDashboardsAndRulesUseRegisteredMetrics: a dashboard panel or an
// alert on a metric nobody exports shows nothing and never fires.
func TestDashboardsAndRulesUseRegisteredMetrics(t *testing.T) {
	have := registeredNames(t)
	used := usedNames(t)
	for name, where := range used {
		if name == "up" || strings.HasPrefix(name, "envoy_") {
			continue // Prometheus's own series; Envoy's, which TestEnvoyNamesAreEnvoys checks against the real Envoy
		}
		if _, ok := have[name]; !ok {
			slices.Sort(where)
			t.Errorf("%s is used by %v but no prometheus.*Opts or NewDesc in the code declares it", name, slices.Compact(where))
		}
	}
	t.Logf("%d metric names used, %d series names declared", len(used), len(have))
}

type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func alertRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile("rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []rule `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatalf("rules.yaml: %v", err)
	}
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}
