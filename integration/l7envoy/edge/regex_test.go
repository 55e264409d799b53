package edge

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/integration/envoyproc"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
)

// plainRegexes are the shapes routes use: literals, anchors, classes,
// case folding, Latin-1, captures, alternations of literals, counted
// repetitions, the translator's own cookie regex, and combinations of
// single atoms with repetitions.
func plainRegexes() []string {
	out := []string{
		"a", "abc", "^abc", "abc$", "^abc$", "^/api/public/v1/task/create$", "^/todolist/.*$", ".*", ".", "(?s).",
		"[^a]", "[^/]+", `\d+`, `\w+`, `\s*`, `\p{L}+`, `\p{Greek}`, "[α-ω]+", "é", "日本語", "(?i)abc", "(?i)^/api/.*$",
		"a|b|c", "foo|bar|baz", "(foo|bar)+", "(?:foo|bar)+", "(a)(b)(c)", "a{3}", "a{3,}", "a{0,5}", "a{2,5}", "(ab){3}",
		"(a{2}){3}", "[a-z]{1,10}", "[a-zA-Z0-9._-]{0,200}", "^/static/[a-zA-Z0-9._-]{0,200}/", "^/static/[a-zA-Z0-9._-]{0,20}/",
		`\bfoo\b`, "^/[a-z]+$", `(^|.*;\s*)ab=b(;.*|\s*)$`, `(^|.*;\s*)shop-session-long-cookie-name=somevalue(;.*|\s*)$`,
		"^/users/[0-9]+/orders/[0-9]+$", "^/v[12]/.*$", `[^\x00-\x7f]+`, ".{5}", ".{0,10}", "(?s).{0,10}", "x*y*z*",
		"(a|ab)(c|bcd)(d*)", `^https://([a-z0-9-]+\.)*example\.com$`, "[[:alpha:]]+", "[[:^alpha:]]", `\Aabc\z`, "(?U)a+",
		"a+?", "a*?b", "(?i)[a-z]{0,100}", `\w{0,100}`, `\s{0,100}`, "[[:alnum:]]{0,100}", "(?m)^abc$", "^a|^b", "(^a)",
		"x^", `^\ba`, "(|a)", "^/files/[a-z0-9]{0,120}$", "^/api/v[0-9]+/(users|orders)/[0-9]+$",
	}
	atoms := []string{"a", "[a-z]", "[^/]", ".", `\d`, "(?i)k", "[a-zA-Z0-9._-]", "é", `\w`}
	reps := []string{"", "*", "+", "?", "{3}", "{2,7}", "{0,12}", "{4,}"}
	for i, a := range atoms {
		for j, r := range reps {
			b := atoms[(i+j+1)%len(atoms)]
			out = append(out, a+r, "^/p/"+a+r+b+"$", a+r+"/"+b+reps[(i+2*j)%len(reps)])
		}
	}
	return out
}

// nestedRegexes are generated (a fixed seed) from atoms with nested
// alternations, loops, captures and counted repetitions: where RE2's
// flattening adds instructions.
func nestedRegexes(n int) []string {
	rng := rand.New(rand.NewPCG(7, 21))
	atoms := []string{"a", "b", "[a-z]", "[ab]", ".", `\d`}
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth == 0 {
			return atoms[rng.IntN(len(atoms))]
		}
		switch rng.IntN(7) {
		case 0:
			parts := make([]string, 2+rng.IntN(2))
			for i := range parts {
				parts[i] = gen(depth - 1)
			}
			return "(?:" + strings.Join(parts, "|") + ")"
		case 1:
			return gen(depth-1) + gen(depth-1)
		case 2:
			return "(?:" + gen(depth-1) + ")+"
		case 3:
			return "(?:" + gen(depth-1) + ")*"
		case 4:
			return "(?:" + gen(depth-1) + ")?"
		case 5:
			return "(" + gen(depth-1) + ")"
		default:
			return fmt.Sprintf("(?:%s){%d,%d}", gen(depth-1), rng.IntN(3), 3+rng.IntN(3))
		}
	}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		re := gen(1 + rng.IntN(4))
		if !seen[re] {
			seen[re] = true
			out = append(out, re)
		}
	}
	return out
}

// envoyRegexSizes runs "envoy --mode validate" on a bootstrap with one
// route per regex, Envoy's error level out of the way and its warn level
// at 0, and reads each regex's program size from the warnings.
func envoyRegexSizes(t *testing.T, corpus []string) map[string]int {
	t.Helper()
	var routes []any
	for i, re := range corpus {
		routes = append(routes, map[string]any{
			"match":           map[string]any{"prefix": "/", "headers": []any{map[string]any{"name": fmt.Sprintf("x-%d", i), "string_match": map[string]any{"safe_regex": map[string]any{"regex": re}}}}},
			"direct_response": map[string]any{"status": 200},
		})
	}
	boot := map[string]any{
		"layered_runtime": map[string]any{"layers": []any{map[string]any{"name": "s", "static_layer": map[string]any{
			translate.RegexErrorLevelKey: 1 << 30, translate.RegexWarnLevelKey: 0}}}},
		"static_resources": map[string]any{"listeners": []any{listenerWithRoutes(routes)}},
	}
	out, err := envoyValidate(t, boot)
	if err != nil {
		t.Fatalf("envoy refused the corpus: %v\n%s", err, out)
	}
	warn := regexp.MustCompile(`regex '(.*)' RE2 program size of (\d+) > max program size of 0 set for the warn level threshold`)
	sizes := map[string]int{}
	for _, m := range warn.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[2])
		sizes[m[1]] = n
	}
	return sizes
}

// listenerWithRoutes is a static listener whose one virtual host has
// routes.
func listenerWithRoutes(routes []any) map[string]any {
	return map[string]any{
		"name":    "l",
		"address": map[string]any{"socket_address": map[string]any{"address": "127.0.21.250", "port_value": 21999}},
		"filter_chains": []any{map[string]any{"filters": []any{map[string]any{
			"name": "envoy.filters.network.http_connection_manager",
			"typed_config": map[string]any{
				"@type":        "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
				"stat_prefix":  "x",
				"http_filters": []any{map[string]any{"name": "envoy.filters.http.router", "typed_config": map[string]any{"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}},
				"route_config": map[string]any{"virtual_hosts": []any{map[string]any{"name": "v", "domains": []any{"*"}, "routes": routes}}},
			},
		}}}},
	}
}

// envoyValidate runs "envoy --mode validate" on the bootstrap (JSON) and
// returns its output at warn level.
func envoyValidate(t *testing.T, boot map[string]any) (string, error) {
	t.Helper()
	bin, err := envoyproc.Binary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(boot)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bootstrap.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--mode", "validate", "-c", p, "--disable-hot-restart", "-l", "warn").CombinedOutput()
	return string(out), err
}

// TestRegexProgramSizeAgainstEnvoy: the real Envoy counts the program
// of each regex of a corpus: for the shapes routes use the model's
// estimate is never below Envoy's count; for generated nested ones
// Envoy's count never exceeds twice the estimate (the gateway's error
// level is twice the model's limit, so no regex the model accepts is
// refused); estimates stay close. Envoy's default limit (100) refuses
// the example (1,005) with the route table holding it, the
// gateway's runtime (translate.RegexRuntime) takes the largest regex the
// model accepts, and the model refuses the example.
func TestRegexProgramSizeAgainstEnvoy(t *testing.T) {
	plain, nested := plainRegexes(), nestedRegexes(1500)
	sizes := envoyRegexSizes(t, append(append([]string(nil), plain...), nested...))
	compare := func(corpus []string, check func(re string, est, got int)) (n int, over, under float64) {
		for _, re := range corpus {
			est, err := model.RegexProgramSize(re)
			if err != nil {
				t.Errorf("%q: the model refuses it (%v), Envoy does not", re, err)
				continue
			}
			got, ok := sizes[re]
			if !ok {
				t.Errorf("%q: Envoy reported no program size", re)
				continue
			}
			n++
			over, under = max(over, float64(est)/float64(got)), max(under, float64(got)/float64(est))
			if os.Getenv("REGEX_DEBUG") != "" {
				t.Logf("%-50q envoy %4d est %4d", re, got, est)
			}
			check(re, est, got)
		}
		return n, over, under
	}
	n, over, _ := compare(plain, func(re string, est, got int) {
		if est < got || est > 2*got+4 {
			t.Errorf("%q: estimate %d, Envoy counts %d: want at or a little above", re, est, got)
		}
	})
	t.Logf("%d plain regexes: estimates at or above Envoy's count, at most %.2f times it", n, over)
	n, over, under := compare(nested, func(re string, est, got int) {
		if got > 2*est || est > 3*got+8 {
			t.Errorf("%q: estimate %d, Envoy counts %d: want Envoy's within twice the estimate", re, est, got)
		}
	})
	t.Logf("%d nested regexes: Envoy's count at most %.2f times the estimate, the estimate at most %.2f times Envoy's", n, under, over)
	if n < 1500 {
		t.Errorf("%d nested regexes compared, want 1500", n)
	}

	const example = "^/static/[a-zA-Z0-9._-]{0,200}/"
	route := []any{map[string]any{"match": map[string]any{"safe_regex": map[string]any{"regex": example}}, "direct_response": map[string]any{"status": 200}}}
	out, err := envoyValidate(t, map[string]any{"static_resources": map[string]any{"listeners": []any{listenerWithRoutes(route)}}})
	if err == nil || !strings.Contains(out, "RE2 program size of 1005 > max program size of 100") {
		t.Errorf("Envoy with its default limit: %v\n%s\nwant the route table refused (program size 1005 > 100)", err, out)
	}
	if err := model.CheckRegex(example); err == nil || !strings.Contains(err.Error(), "about 1005 instructions") {
		t.Errorf("the model takes %q: %v", example, err)
	}
	// The largest regex the model accepts goes through the gateway's runtime.
	const big = "[a-zA-Z0-9._-]{0,199}" // 4 + 199*5 = 999
	if err := model.CheckRegex(big); err != nil {
		t.Fatalf("%q: %v", big, err)
	}
	route = []any{map[string]any{"match": map[string]any{"safe_regex": map[string]any{"regex": big}}, "direct_response": map[string]any{"status": 200}}}
	if out, err := envoyValidate(t, map[string]any{"layered_runtime": gatewayRuntime(t), "static_resources": map[string]any{"listeners": []any{listenerWithRoutes(route)}}}); err != nil {
		t.Errorf("Envoy with the gateway's runtime refuses %q: %v\n%s", big, err, out)
	}
}

// gatewayRuntime is translate.RegexRuntime (what every gateway bootstrap
// has) as Envoy's JSON.
func gatewayRuntime(t *testing.T) map[string]any {
	t.Helper()
	y, err := translate.YAML(translate.RegexRuntime())
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRegexTooComplexRefusedAtInput: through l7 serve and Envoy, a DSL
// file whose pattern is too complex for Envoy is refused alone, with an
// error naming the file and field; the rest of the config is served,
// including a regex route above Envoy's default limit of 100 and below
// the model's (the gateway's runtime takes it).
func TestRegexTooComplexRefusedAtInput(t *testing.T) {
	const vip, node = "127.0.21.17", "127.0.21.117"
	b := startBackend(t, "files")
	g := startGateway(t, node, map[string]string{
		"gw.yaml": fmt.Sprintf("kind: gateway/gateway/v1\nname: public\ngroup: edge\nlisteners: [{name: web, vip: %s, port: 21080, protocol: HTTP}]\n", vip),
		"static.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: static
group: edge
hosts: [static.example.com]
listeners: [public/web]
upstreams: [{name: main, endpoints: ["%s"]}]
routes: [{pattern: "^/static/[a-zA-Z0-9._-]{0,200}/", target: main}]
`, b.addr()),
		"files.yaml": fmt.Sprintf(`kind: gateway/service/v1
name: files
group: edge
hosts: [files.example.com]
listeners: [public/web]
upstreams: [{name: main, endpoints: ["%s"]}]
routes:
  - {pattern: "^/files/[a-z0-9]{0,120}$", target: main}
`, b.addr()),
	})
	if n, err := model.RegexProgramSize("^/files/[a-z0-9]{0,120}$"); err != nil || n <= 100 {
		t.Fatalf("the served regex's program: %d %v, want above Envoy's default of 100", n, err)
	}
	c := plainClient(vip + ":21080")
	r := send(t, c, request{URL: "http://files.example.com/files/abc123"})
	r.wantStatus(t, 200)
	if r.Saw == nil || r.Saw.Path != "/files/abc123" {
		t.Errorf("backend saw %+v", r.Saw)
	}
	send(t, c, request{URL: "http://static.example.com/static/x/"}).wantStatus(t, 404)
	deadline := time.Now().Add(time.Minute)
	const refused = `static.yaml: service \"static\": routes[0].pattern: too complex for the gateway: its RE2 program has about 1005 instructions`
	for !strings.Contains(g.LogTail("l7", 1<<20), refused) {
		if time.Now().After(deadline) {
			t.Fatalf("l7 did not say which file and field it refused:\n%s", g.LogTail("l7", 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n, err := g.Stat(t.Context(), "re2.exceeded_warn_level"); err != nil || n != 0 {
		t.Errorf("re2.exceeded_warn_level %d (%v): a regex past the model's limit reached Envoy", n, err)
	}
}
