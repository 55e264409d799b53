package translate_test

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The feature goldens, one pair per translator feature, as Envoy
// Gateway's internal/xds/translator/testdata:
//
//	testdata/in/<feature>.yaml        DSL documents, separated by "---"
//	testdata/in/<feature>.model.yaml  a model.Config in YAML (the IR), for
//	                                  what only Gateway API expresses
//	testdata/out/<feature>.<type>.yaml       the gateway resources of each
//	                                         xDS type the feature has
//	testdata/out/<feature>.grpc.<type>.yaml  proxyless gRPC clients' (grpc)
//	testdata/out/<feature>.bootstrap.yaml    the static bootstrap (bootstrap)
//
// An input with several groups names the group after the feature:
// <feature>.<group>.<type>.yaml. go test ./l7/translate -run
// TestFeatureGolden -update rewrites the outputs, and removes those no
// input produces any more.
const (
	goldenIn  = "testdata/in"
	goldenOut = "testdata/out"
)

// featureOutput is one of the things a feature's pair can show.
type featureOutput int

const (
	// gatewayResources: the Envoy gateways' resources, one file per type.
	gatewayResources featureOutput = iota
	// grpcResources: the proxyless gRPC clients' resources, per type.
	grpcResources
	// staticBootstrap: the bootstrap "l7 render" prints.
	staticBootstrap
)

// featureSpec is how a feature's input is resolved and what its pair
// shows; a feature not in featureSpecs is resolved without options and
// shows its gateway resources.
type featureSpec struct {
	opts    model.Options
	outputs []featureOutput
}

// featureSpecs are the features that need resolve options or show more
// than their gateway resources, by name.
var featureSpecs = map[string]featureSpec{
	"ratelimit-global": {opts: model.Options{RateLimitService: rateLimitService}},
	"filter-chain":     {opts: model.Options{RateLimitService: rateLimitService}},
	"dns-upstream": {opts: model.Options{DNSResolvers: []netip.AddrPort{
		netip.MustParseAddrPort("127.0.23.53:53"), netip.MustParseAddrPort("10.96.0.10:53")}}},
	"grpc-service": {outputs: []featureOutput{gatewayResources, grpcResources}},
	"grpc-client":  {outputs: []featureOutput{grpcResources}},
	"bootstrap":    {outputs: []featureOutput{staticBootstrap}},
}

// rateLimitService is where the features with global limits send them.
var rateLimitService = &model.RateLimitService{Host: "ratelimit.tlb-system.svc", Port: 8081}

// typeFiles names the gateway resource types in output file names, in
// the order ResourcesYAML writes them.
var typeFiles = []struct{ typ, file string }{
	{resource.ListenerType, "listeners"},
	{resource.RouteType, "routes"},
	{resource.ClusterType, "clusters"},
	{resource.EndpointType, "endpoints"},
	{resource.SecretType, "secrets"},
}

// TestFeatureGolden translates each input of testdata/in and compares
// every output with its file in testdata/out. Each set also passes
// validate.Set and is what the Cache builds, and (resolve) the real Envoy
// accepts every group's gateway config.
func TestFeatureGolden(t *testing.T) {
	ins, err := filepath.Glob(filepath.Join(goldenIn, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	features := map[string]bool{}
	for _, in := range ins {
		feature := featureName(in)
		if features[feature] {
			t.Errorf("%s: a second input of feature %q", in, feature)
			continue
		}
		features[feature] = true
		t.Run(feature, func(t *testing.T) {
			spec := featureSpecs[feature]
			outs := featureOutputs(t, loadFeature(t, in, spec.opts), feature, spec.outputs)
			for _, name := range slices.Sorted(maps.Keys(outs)) {
				goldenFile(t, name, outs[name])
			}
			dropStale(t, feature+".*", func(name string) bool { _, ok := outs[name]; return ok })
		})
	}
	for f := range featureSpecs {
		if !features[f] {
			t.Errorf("featureSpecs names %q, which has no input in %s", f, goldenIn)
		}
	}
	dropStale(t, "*", func(name string) bool { f, _, _ := strings.Cut(name, "."); return features[f] })
}

// featureName is the feature an input file holds: its name without
// .model.yaml or .yaml.
func featureName(in string) string {
	base := filepath.Base(in)
	if f, ok := strings.CutSuffix(base, ".model.yaml"); ok {
		return f
	}
	return strings.TrimSuffix(base, ".yaml")
}

// loadFeature resolves an input file: DSL documents, loaded as the DSL
// directory loads them (certificate and key file names are those of the
// example, l7/testdata/config: certs/..., keys/...), or a model.Config.
// An input with an error or a problem is a mistake in the test.
func loadFeature(t *testing.T, in string, opts model.Options) model.Resolved {
	t.Helper()
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var cfg model.Config
	if strings.HasSuffix(in, ".model.yaml") {
		if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
	} else {
		cfg = loadDSLDocs(t, featureName(in), data)
	}
	r := resolve(t, cfg, opts)
	if len(r.Problems) > 0 {
		t.Fatalf("%s has problems: %v", in, r.Problems)
	}
	return r
}

// loadDSLDocs writes each document of data to a file of its own in a
// temporary directory, beside links to the example's certs and keys, and
// loads that directory.
func loadDSLDocs(t *testing.T, feature string, data []byte) model.Config {
	t.Helper()
	example, err := filepath.Abs("../testdata/config")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, sub := range []string{"certs", "keys"} {
		if err := os.Symlink(filepath.Join(example, sub), filepath.Join(dir, sub)); err != nil {
			t.Fatal(err)
		}
	}
	for i, doc := range splitDocs(data) {
		name := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", feature, i+1))
		if err := os.WriteFile(name, doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, errs, err := dsl.NewDir(dir, time.Now, example).Load()
	if err != nil || len(errs) > 0 {
		t.Fatalf("%s: %v %v", feature, err, errs)
	}
	return cfg
}

// splitDocs splits a multi-document YAML file at its "---" lines,
// dropping documents with nothing but comments.
func splitDocs(data []byte) [][]byte {
	var out [][]byte
	for _, doc := range bytes.Split(append([]byte("\n"), data...), []byte("\n---\n")) {
		for _, line := range strings.Split(string(doc), "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, doc)
				break
			}
		}
	}
	return out
}

// featureOutputs renders what a feature's pair shows, by output file
// name, checking each set on the way.
func featureOutputs(t *testing.T, r model.Resolved, feature string, outputs []featureOutput) map[string][]byte {
	t.Helper()
	if len(outputs) == 0 {
		outputs = []featureOutput{gatewayResources}
	}
	groups := translate.Groups(r)
	out := map[string][]byte{}
	for _, g := range groups {
		prefix := feature
		if len(groups) > 1 {
			prefix += "." + g
		}
		for _, o := range outputs {
			switch o {
			case gatewayResources:
				perType(t, out, prefix, checkedSet(t, r, g, translate.Gateway))
			case grpcResources:
				perType(t, out, prefix+".grpc", checkedSet(t, r, g, translate.GRPC))
			case staticBootstrap:
				b, err := translate.StaticBootstrap(checkedSet(t, r, g, translate.Gateway))
				if err != nil {
					t.Fatal(err)
				}
				if err := validate.Message(b); err != nil {
					t.Fatalf("group %s: static bootstrap fails validation: %v", g, err)
				}
				y, err := translate.YAML(b)
				if err != nil {
					t.Fatal(err)
				}
				out[prefix+".bootstrap.yaml"] = y
			}
		}
	}
	return out
}

// checkedSet is the set of a group for a kind of client, which passes
// validate.Set and is what the Cache builds.
func checkedSet(t *testing.T, r model.Resolved, group string, kind translate.Kind) translate.Resources {
	t.Helper()
	set := translate.Group(r, group, kind)
	if err := validate.Set(set); err != nil {
		t.Fatalf("group %s, %s: translated set fails validation: %v", group, kind, err)
	}
	c := translate.NewCache()
	cached := c.ForKind(r, group, kind, c.Shared(r, group))
	for _, tf := range typeFiles {
		if len(cached[tf.typ]) != len(set[tf.typ]) {
			t.Fatalf("group %s, %s %s: the cache builds %d, the translator %d", group, kind, tf.file, len(cached[tf.typ]), len(set[tf.typ]))
		}
		for i := range set[tf.typ] {
			if !proto.Equal(cached[tf.typ][i], set[tf.typ][i]) {
				t.Errorf("group %s, %s %s[%d]: the cache builds something else", group, kind, tf.file, i)
			}
		}
	}
	return set
}

// perType renders each non-empty type of set as out[<prefix>.<type>.yaml].
func perType(t *testing.T, out map[string][]byte, prefix string, set translate.Resources) {
	t.Helper()
	for _, tf := range typeFiles {
		if len(set[tf.typ]) == 0 {
			continue
		}
		y, err := translate.ResourcesYAML(translate.Resources{tf.typ: set[tf.typ]})
		if err != nil {
			t.Fatal(err)
		}
		out[prefix+"."+tf.file+".yaml"] = y
	}
}

// goldenFile compares got with testdata/out/name, or writes it there with
// -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenOut, name)
	if *update {
		if err := os.MkdirAll(goldenOut, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test ./l7/translate -run TestFeatureGolden -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (-want +got); run go test ./l7/translate -run TestFeatureGolden -update and review the diff:\n%s",
			path, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
	}
}

// dropStale fails on (with -update: removes) the files of testdata/out
// matching pattern that keep does not want.
func dropStale(t *testing.T, pattern string, keep func(name string) bool) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(goldenOut, pattern))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if keep(filepath.Base(p)) {
			continue
		}
		if !*update {
			t.Errorf("%s: no input produces it any more; run with -update to remove it", p)
			continue
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}
