package gatewayconformance

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// utilsPath is the import path prefix of the suite's helper packages.
const utilsPath = "sigs.k8s.io/gateway-api/conformance/utils/"

// trafficHelpers are, per package the suite's tests import, the exported
// names whose use sends a request, opens a connection or reads what a
// request left behind: a test that reaches one needs a data plane.
var trafficHelpers = map[string][]string{
	utilsPath + "http": {"MakeRequestAndExpectEventuallyConsistentResponse", "MakeRequestAndExpectFailure",
		"WaitForConsistentResponse", "WaitForConsistentFailureResponse", "ExpectMirroredRequest"},
	utilsPath + "grpc": {"MakeRequestAndExpectEventuallyConsistentResponse", "DefaultClient"},
	utilsPath + "tls": {"MakeTLSRequestAndExpectEventuallyConsistentResponse", "WaitForConsistentTLSResponse",
		"MakeTLSRequestAndExpectFailureResponse", "MakeTLSConnectionAndExpectEventuallyConnectionRejection"},
	utilsPath + "tcp": {"MakeTCPRequestAndExpectEventuallyValidResponse", "WaitForValidTCPResponse",
		"EchoSendOnce", "ExpectEchoResponse", "ExpectAddressBeAvailable"},
	utilsPath + "udp":    {"ExpectEchoResponse", "ExpectEchoResponseFromBackend"},
	utilsPath + "weight": {"TestWeightedDistribution", "TestWeightedDistributionBatch"},
	utilsPath + "echo":   {"ConnectToApp", "ConnectToAppInNamespace"},
	"net":                {"Dial", "DialTimeout", "DialTCP", "DialUDP", "DialIP", "Dialer"},
	"crypto/tls":         {"Dial", "DialWithDialer", "Dialer"},
	"net/http":           {"Get", "Post", "Head", "Client", "DefaultClient"},
}

// neutralHelpers are the other names of the suite's traffic packages the
// tests use: types, request builders and comparisons, none of which sends
// anything. A name of those packages in neither list fails the analysis,
// so a new suite version cannot slip a traffic helper past it. The
// roundtripper package is not here: it holds only request types and
// protocol names; its requests go through the suite's RoundTripper, one of
// the trafficClients.
var neutralHelpers = map[string][]string{
	utilsPath + "http": {"AddEntropy", "AwaitConvergence", "BackendRef", "CalculateHost", "CompareRoundTrip",
		"ExpectedRequest", "ExpectedResponse", "GetMirrorLogRegexp", "Ipv6SafeHost", "MakeRequest",
		"MirroredBackend", "Request", "Response"},
	utilsPath + "grpc":      {"AddEntropy", "ExpectedResponse", "RequestMetadata", "Response", "Client"},
	utilsPath + "tls":       {},
	utilsPath + "tcp":       {"ExpectedResponse"},
	utilsPath + "udp":       {"ExpectedResponse"},
	utilsPath + "weight":    {"MaxTestRetries", "NewFunctionBasedSender", "NewBatchFunctionBasedSender", "AddRandomEntropy"},
	utilsPath + "echo":      {"ParseResponse", "Response", "MeshPod", "MeshApplication", "MeshAppEchoV1", "MeshAppEchoV2"},
	utilsPath + "websocket": {"Dialer"},
}

// trafficClients are the fields of the suite that talk to the gateway's
// data plane: a test that reads one sends traffic through it.
var trafficClients = map[string]bool{"RoundTripper": true, "GRPCClient": true, "WebSocketDialer": true}

// DataPlaneTests parses the suite's test packages in dirs (tests and
// tests/mesh) and returns, for every conformance test (by ShortName) that
// sends traffic through the gateway, the reason: the first traffic helper
// it reaches, directly or through its package's own functions. It also
// returns how many conformance tests the packages declare.
func DataPlaneTests(dirs ...string) (map[string]string, int, error) {
	out := map[string]string{}
	total := 0
	for _, dir := range dirs {
		found, n, err := dataPlaneTestsIn(dir)
		if err != nil {
			return nil, 0, err
		}
		for k, v := range found {
			out[k] = v
		}
		total += n
	}
	return out, total, nil
}

func dataPlaneTestsIn(dir string) (map[string]string, int, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, 0, fmt.Errorf("list the suite's tests in %s: %w", dir, err)
	}
	a := &analysis{decls: map[string]*declFacts{}, methods: map[string][]string{}}
	type testDecl struct {
		short string
		key   string
	}
	var tests []testDecl
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, 0, fmt.Errorf("parse %s: %w", f, err)
		}
		imports := map[string]string{}
		for _, im := range file.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = p
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				key := d.Name.Name
				if d.Recv != nil {
					key = "method " + d.Name.Name + " " + fset.Position(d.Pos()).String()
					a.methods[d.Name.Name] = append(a.methods[d.Name.Name], key)
				}
				if err := a.add(key, imports, d); err != nil {
					return nil, 0, fmt.Errorf("%s: %w", fset.Position(d.Pos()), err)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					vs, ok := s.(*ast.ValueSpec)
					if !ok {
						continue
					}
					for i, n := range vs.Names {
						var val ast.Node = vs
						if i < len(vs.Values) {
							val = vs.Values[i]
						}
						if err := a.add(n.Name, imports, val); err != nil {
							return nil, 0, fmt.Errorf("%s: %w", fset.Position(n.Pos()), err)
						}
						short, ok, err := conformanceTest(imports, val)
						if err != nil {
							return nil, 0, fmt.Errorf("%s: var %s: %w", fset.Position(n.Pos()), n.Name, err)
						}
						if ok {
							tests = append(tests, testDecl{short: short, key: n.Name})
						}
					}
				}
			}
		}
	}
	if len(tests) == 0 {
		return nil, 0, fmt.Errorf("no conformance tests in %s", dir)
	}
	out := map[string]string{}
	for _, td := range tests {
		if hit := a.reach(td.key); hit != "" {
			out[td.short] = "needs a data plane: uses " + hit
		}
	}
	return out, len(tests), nil
}

// declFacts is what one package-level declaration uses.
type declFacts struct {
	traffic []string // traffic helpers it names, sorted
	refs    []string // package-level declarations it names
}

type analysis struct {
	decls   map[string]*declFacts
	methods map[string][]string // method name -> decl keys
}

// add records the facts of the declaration key with body n.
func (a *analysis) add(key string, imports map[string]string, n ast.Node) error {
	facts := &declFacts{}
	var errs []error
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				if path, isPkg := imports[x.Name]; isPkg {
					name := n.Sel.Name
					switch {
					case slices.Contains(trafficHelpers[path], name):
						facts.traffic = append(facts.traffic, x.Name+"."+name)
					case slices.Contains(neutralHelpers[path], name):
					case isTrafficPackage(path):
						errs = append(errs, fmt.Errorf("%s.%s (%s) is neither a traffic nor a neutral helper: classify it in dataplane.go", x.Name, name, path))
					}
					return false
				}
			}
			if trafficClients[n.Sel.Name] {
				facts.traffic = append(facts.traffic, "the suite's "+n.Sel.Name)
			}
			facts.refs = append(facts.refs, "."+n.Sel.Name)
		case *ast.Ident:
			facts.refs = append(facts.refs, n.Name)
		}
		return true
	})
	sort.Strings(facts.traffic)
	a.decls[key] = facts
	return errors.Join(errs...)
}

// reach returns the first traffic helper the declaration key reaches, or
// "" when it reaches none.
func (a *analysis) reach(key string) string {
	seen := map[string]bool{}
	queue := []string{key}
	var hits []string
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		if seen[k] {
			continue
		}
		seen[k] = true
		f := a.decls[k]
		if f == nil {
			continue
		}
		hits = append(hits, f.traffic...)
		for _, r := range f.refs {
			if m, ok := strings.CutPrefix(r, "."); ok {
				queue = append(queue, a.methods[m]...)
				continue
			}
			queue = append(queue, r)
		}
	}
	if len(hits) == 0 {
		return ""
	}
	sort.Strings(hits)
	return hits[0]
}

// conformanceTest reports whether n is a suite.ConformanceTest literal and
// returns its ShortName.
func conformanceTest(imports map[string]string, n ast.Node) (string, bool, error) {
	lit, ok := n.(*ast.CompositeLit)
	if !ok {
		return "", false, nil
	}
	sel, ok := lit.Type.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "ConformanceTest" {
		return "", false, nil
	}
	if x, ok := sel.X.(*ast.Ident); !ok || imports[x.Name] != utilsPath+"suite" {
		return "", false, nil
	}
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "ShortName" {
			bl, ok := kv.Value.(*ast.BasicLit)
			if !ok || bl.Kind != token.STRING {
				return "", false, errors.New("ShortName is not a string literal")
			}
			s, err := strconv.Unquote(bl.Value)
			return s, err == nil, err
		}
	}
	return "", false, errors.New("ConformanceTest without a ShortName")
}

func isTrafficPackage(path string) bool {
	_, ok := neutralHelpers[path]
	return ok
}
